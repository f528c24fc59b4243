package localnode

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one started process.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// supervisor starts the node's processes as children of the calling
// process (they share its process group, so `down` can always reach them)
// and notices when one exits.
type supervisor struct {
	l      Layout
	mu     sync.Mutex
	procs  []*proc
	exited chan *proc
}

func newSupervisor(l Layout) *supervisor {
	return &supervisor{l: l, exited: make(chan *proc, 64)}
}

// start runs path with args, inside the node's namespace when inNode, with
// its output in logs/<name>.log.
func (s *supervisor) start(name string, inNode bool, path string, args ...string) error {
	logf, err := os.OpenFile(s.l.Log(name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	argv := append([]string{path}, args...)
	if inNode {
		argv = append([]string{"nsenter", "--net=" + s.l.NetNS()}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logf.Close()
		close(p.done)
		s.exited <- p
	}()
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	return s.writePIDs()
}

// writePIDs records the pids for `status`.
func (s *supervisor) writePIDs() error {
	s.mu.Lock()
	pids := map[string]int{}
	for _, p := range s.procs {
		pids[p.name] = p.cmd.Process.Pid
	}
	s.mu.Unlock()
	data, err := json.MarshalIndent(pids, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(s.l.PIDFile(), data, 0o600)
}

// stop sends SIGTERM to the named processes, in order, each given grace
// to exit before SIGKILL. Names not started are ignored.
func (s *supervisor) stop(grace time.Duration, names ...string) {
	for _, n := range names {
		s.mu.Lock()
		var targets []*proc
		for _, p := range s.procs {
			if p.name == n || strings.HasPrefix(p.name, n+"-") {
				targets = append(targets, p)
			}
		}
		s.mu.Unlock()
		for _, p := range targets {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range targets {
			select {
			case <-p.done:
			case <-time.After(grace):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
	}
}

// names lists the started processes' names in start order.
func (s *supervisor) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.procs))
	for _, p := range s.procs {
		out = append(out, p.name)
	}
	return out
}

// ReadPIDs reads the pid file of a running instance.
func ReadPIDs(l Layout) (map[string]int, error) {
	data, err := os.ReadFile(l.PIDFile())
	if err != nil {
		return nil, err
	}
	var pids map[string]int
	return pids, json.Unmarshal(data, &pids)
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
