// Command pause is the pod sandbox's container: it holds the pod's
// namespaces, reaps zombies (as PID 1 of a shared process namespace) and
// exits on SIGINT or SIGTERM. Built static (CGO_ENABLED=0) into the image
// that containerd's sandbox_image names (make node-images).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
