#!/bin/bash
# A real container registry for on-cluster OS image builds: Debian's
# docker-registry (the distribution v2 registry) on the host's loopback, with
# TLS (its own CA) and basic auth (htpasswd, bcrypt), and deletion enabled
# so that superseded images can be deleted by digest through the registry
# API. Pods of a local management cluster reach it through the node's host
# port forward, at the node IP: give that IP as an extra name for the
# certificate.
#
#   hack/osbuild/registry.sh up   DIR PORT [IP_OR_DNS_NAME...]
#   hack/osbuild/registry.sh down DIR
#
# up writes into DIR: ca.crt (trust this), tls.crt/tls.key, htpasswd, the
# user's credentials (user, password: random, made once), config.yml,
# data/ (the images), registry.log and registry.pid; it waits until the
# registry answers /v2/ and is idempotent. down stops it and removes DIR.
set -euo pipefail

cmd=${1:?usage: registry.sh up|down DIR [PORT NAMES...]}
dir=${2:?usage: registry.sh up|down DIR [PORT NAMES...]}

case "$cmd" in
down)
	if [ -f "$dir/registry.pid" ]; then
		pid=$(cat "$dir/registry.pid")
		if [ -d "/proc/$pid" ] && grep -q docker-registry "/proc/$pid/cmdline" 2>/dev/null; then
			kill "$pid"
			for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
		fi
	fi
	rm -rf "$dir"
	exit 0
	;;
up) ;;
*) echo "registry.sh: unknown command $cmd" >&2; exit 2 ;;
esac

port=${3:?usage: registry.sh up DIR PORT [NAMES...]}
shift 3
for t in docker-registry openssl htpasswd; do
	command -v "$t" >/dev/null || { echo "registry.sh: $t is missing: run make osbuild-deps" >&2; exit 1; }
done
mkdir -p "$dir/data"
dir=$(cd "$dir" && pwd)

if [ -f "$dir/registry.pid" ] && [ -d "/proc/$(cat "$dir/registry.pid")" ]; then
	echo "registry.sh: already running (pid $(cat "$dir/registry.pid"), https://127.0.0.1:$port)"
	exit 0
fi

# The CA and the serving certificate: 127.0.0.1, localhost and the names given.
if [ ! -f "$dir/tls.crt" ]; then
	san="IP:127.0.0.1,DNS:localhost"
	for n in "$@"; do
		if [[ $n =~ ^[0-9.]+$ ]]; then san+=",IP:$n"; else san+=",DNS:$n"; fi
	done
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
		-subj "/CN=ocp-capi local registry CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=ocp-capi local registry" \
		-keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" > "$dir/ext.cnf"
	openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
		-days 30 -extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2>/dev/null
	rm -f "$dir/tls.csr" "$dir/ext.cnf"
fi
if [ ! -f "$dir/htpasswd" ]; then
	echo ocp-capi > "$dir/user"
	openssl rand -hex 16 > "$dir/password"
	htpasswd -Bbn "$(cat "$dir/user")" "$(cat "$dir/password")" > "$dir/htpasswd"
fi
cat > "$dir/config.yml" <<CONF
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
  tls:
    certificate: $dir/tls.crt
    key: $dir/tls.key
auth:
  htpasswd:
    realm: ocp-capi-registry
    path: $dir/htpasswd
CONF

setsid docker-registry serve "$dir/config.yml" > "$dir/registry.log" 2>&1 < /dev/null &
echo $! > "$dir/registry.pid"
for _ in $(seq 100); do
	code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$dir/ca.crt" "https://127.0.0.1:$port/v2/" || true)
	if [ "$code" = 401 ]; then
		echo "registry.sh: up at https://127.0.0.1:$port (pid $(cat "$dir/registry.pid"), CA $dir/ca.crt)"
		exit 0
	fi
	sleep 0.1
done
echo "registry.sh: the registry did not answer on 127.0.0.1:$port; its log:" >&2
cat "$dir/registry.log" >&2
exit 1
