#!/usr/bin/env bash
# make quickstart: from a fresh machine to an OpenShift-on-OpenStack cluster
# (3 control-plane + 2 worker machines) made by the ocp-capi providers, with
# everything running locally:
#
#   1. the tools, the managers' images and the release (make tools release images);
#   2. the local management cluster, node size (make mgmt-up MGMT_SIZE=node) and
#      the local OpenStack (hack/openstack/up.sh);
#   3. clusterctl init with CAPI core and the four providers (out/clusterctl.yaml);
#   4. the assisted-service simulator, which plays the installer, with the API
#      server that plays the installed cluster (test/e2e/cmd/quickstart-env);
#   5. clusterctl generate cluster --flavor openstack-agent, kubectl apply, and
#      `clusterctl describe cluster` as the cluster comes up and once it is Available.
#
# NEEDS ROOT: it installs Debian packages (containerd, runc, CNI plugins, the
# OpenStack services), creates network namespaces and runs containerd.
#
#   sudo make quickstart            # or: sudo hack/quickstart.sh
#   hack/quickstart.sh down         # delete the cluster, stop the simulator
#   make mgmt-down openstack-down   # then stop the management cluster and OpenStack
#
# Settings (environment): QS_NAME (quickstart), QS_MGMT_INSTANCE (0: .mgmt),
# QS_CONTROL_PLANE (3), QS_WORKERS (2), QS_TIMEOUT (900 seconds to Available),
# QS_CLOUD (local-demo, from /etc/openstack/clouds.yaml), QS_BUILD (1; 0 skips step 1),
# QS_ASSISTED_PORT (16444), QS_WORKLOAD_PORT (16443): host ports the node forwards,
# QS_RELEASE_DIR (out: the release that make release writes).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

QS_NAME=${QS_NAME:-quickstart}
QS_MGMT_INSTANCE=${QS_MGMT_INSTANCE:-0}
QS_CONTROL_PLANE=${QS_CONTROL_PLANE:-3}
QS_WORKERS=${QS_WORKERS:-2}
QS_TIMEOUT=${QS_TIMEOUT:-900}
QS_CLOUD=${QS_CLOUD:-local-demo}
QS_BUILD=${QS_BUILD:-1}
# The release (clusterctl repository) to install from; make release writes out/.
QS_RELEASE_DIR=$(cd "${QS_RELEASE_DIR:-out}" 2>/dev/null && pwd || echo "$ROOT/out")
ASSISTED_PORT=${QS_ASSISTED_PORT:-16444}
WORKLOAD_PORT=${QS_WORKLOAD_PORT:-16443}
FORWARD_PORTS=5000,8774,8776,8778,9292,9696,9876,$WORKLOAD_PORT,$ASSISTED_PORT
if [ "$QS_MGMT_INSTANCE" = 0 ]; then MGMT_DIR=$ROOT/.mgmt; else MGMT_DIR=$ROOT/.mgmt-$QS_MGMT_INSTANCE; fi
KC=$MGMT_DIR/kubeconfig
STATE=$ROOT/.quickstart
PIDFILE=$STATE/quickstart-env.pid
export PATH=$ROOT/bin:$PATH

START=$(date +%s)
step() { printf '\n==> [%4ss] %s\n' "$(( $(date +%s) - START ))" "$*"; }
die() { echo "quickstart: $*" >&2; exit 1; }

env_running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

stop_env() {
	if env_running; then
		local pid; pid=$(cat "$PIDFILE")
		kill -TERM "$pid"
		for _ in $(seq 240); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -0 "$pid" 2>/dev/null && die "quickstart-env (pid $pid) did not stop"
	fi
	rm -f "$PIDFILE"
}

# start_env runs the simulator and the workload API server for the cluster
# (a fresh one each time: the simulator's CA and the API server's
# certificates are new, and the providers are told).
start_env() {
	stop_env
	mkdir -p "$STATE"
	go -C test/e2e build -o "$ROOT/bin/quickstart-env" ./cmd/quickstart-env
	KUBEBUILDER_ASSETS=$ROOT/bin setsid nohup bin/quickstart-env serve --kubeconfig "$KC" \
		--namespace "$QS_NAME" --cluster "$QS_NAME" --assisted-port $ASSISTED_PORT --workload-port $WORKLOAD_PORT \
		--state-dir "$STATE" >"$STATE/quickstart-env.log" 2>&1 &
	echo $! >"$PIDFILE"
	for _ in $(seq 240); do
		grep -q 'quickstart-env: ready' "$STATE/quickstart-env.log" && { grep 'quickstart-env:' "$STATE/quickstart-env.log"; return 0; }
		env_running || { tail -30 "$STATE/quickstart-env.log"; die "quickstart-env exited (log: $STATE/quickstart-env.log)"; }
		sleep 0.5
	done
	die "quickstart-env not ready after 2 minutes (log: $STATE/quickstart-env.log)"
}

delete_cluster() {
	if kubectl --kubeconfig "$KC" get cluster -n "$QS_NAME" "$QS_NAME" >/dev/null 2>&1; then
		step "Deleting cluster $QS_NAME (the simulator must run: it releases the InfraEnvs)"
		kubectl --kubeconfig "$KC" delete cluster -n "$QS_NAME" "$QS_NAME" --timeout=10m
	fi
}

if [ "${1:-}" = down ]; then
	[ -f "$KC" ] || { echo "quickstart: no management cluster ($KC)"; stop_env; exit 0; }
	env_running || start_env
	delete_cluster
	kubectl --kubeconfig "$KC" delete namespace "$QS_NAME" --ignore-not-found --timeout=2m
	stop_env
	echo "quickstart: cluster deleted and the simulator stopped; 'make mgmt-down openstack-down' stops the rest"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "needs root: it installs Debian packages, creates network namespaces and runs containerd (sudo make quickstart)"

if [ "$QS_BUILD" = 1 ]; then
	step "Building the tools, the managers' images and the release (make tools node-prereqs release images)"
	make --no-print-directory tools node-prereqs release images bin/mgmt
fi

step "Starting the local OpenStack (hack/openstack/up.sh)"
bash hack/openstack/up.sh

step "Starting the local management cluster (node size, instance $QS_MGMT_INSTANCE, $MGMT_DIR)"
if bin/mgmt status --state-dir "$MGMT_DIR" 2>/dev/null | grep -q "^running"; then
	for p in ${FORWARD_PORTS//,/ }; do
		grep -q "^ *$p,\?$" "$MGMT_DIR/node.json" ||
			die "the management cluster in $MGMT_DIR runs without forwarding host port $p; stop it (make mgmt-down) or pick another QS_MGMT_INSTANCE"
	done
	echo "already running"
else
	make --no-print-directory mgmt-up MGMT_SIZE=node MGMT_INSTANCE="$QS_MGMT_INSTANCE" MGMT_DIR="$MGMT_DIR" \
		MGMT_KUBECONFIG="$KC" MGMT_ARGS="--forward-host-ports $FORWARD_PORTS"
fi

# The release's versions, as clusterctl names them.
version_of() { basename "$(ls -d "$QS_RELEASE_DIR/$1"/v* | sort -V | tail -1)"; }
CAPI=$(version_of cluster-api)
BOOT=$(version_of bootstrap-openshift-agent)
CP=$(version_of control-plane-openshift-agent)
INFRA=$(version_of infrastructure-openstack)
ADDON=$(version_of addon-openshift)

step "Installing the CRDs of the systems the simulator plays (assisted-service, hive, Metal3, config.openshift.io)"
# test/e2e is a module of its own: build from inside it.
go -C test/e2e build -o "$ROOT/bin/quickstart-env" ./cmd/quickstart-env
bin/quickstart-env crds --kubeconfig "$KC"

if kubectl --kubeconfig "$KC" get deployment -n capi-system capi-controller-manager >/dev/null 2>&1; then
	step "Providers already installed (clusterctl init ran before)"
else
	step "clusterctl init: cert-manager, CAPI core $CAPI and the providers from out/clusterctl.yaml"
	# The bootstrap provider reaches the simulator through the Service
	# "assisted-service" that quickstart-env makes (docs/e2e.md).
	OCP_CAPI_BOOTSTRAP_ASSISTED_SERVICE_URL=https://assisted-service \
		clusterctl init --kubeconfig "$KC" --config "$QS_RELEASE_DIR/clusterctl.yaml" --wait-providers \
		--core "cluster-api:$CAPI" --bootstrap "openshift-agent:$BOOT" --control-plane "openshift-agent:$CP" \
		--infrastructure "openstack:$INFRA" --addon "openshift:$ADDON"
fi

step "Applying the add-on's RBAC in openshift-machine-config-operator and openshift-cluster-api (docs/install.md)"
for ns in openshift-machine-config-operator openshift-cluster-api; do
  kubectl --kubeconfig "$KC" create namespace "$ns" --dry-run=client -o yaml | kubectl --kubeconfig "$KC" apply -f -
done
kubectl --kubeconfig "$KC" apply -f "$QS_RELEASE_DIR/addon-openshift/$ADDON/build-rbac.yaml"

step "Starting the assisted-service simulator and the API server that plays the installed cluster (test/e2e/cmd/quickstart-env)"
start_env
delete_cluster

step "clusterctl generate cluster $QS_NAME --flavor openstack-agent ($QS_CONTROL_PLANE control-plane, $QS_WORKERS worker machines)"
mkdir -p "$STATE"
OPENSTACK_CLOUD_YAML_B64=$(bin/quickstart-env cloud-yaml --cloud "$QS_CLOUD" | base64 -w0) \
OPENSTACK_CLOUD=$QS_CLOUD OPENSTACK_IMAGE_NAME=cirros-fake \
OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR=m1.small OPENSTACK_NODE_MACHINE_FLAVOR=m1.tiny \
OPENSTACK_DNS_NAMESERVERS=10.0.0.53 OPENSHIFT_BASE_DOMAIN=quickstart.ocp-capi.local \
OPENSHIFT_PULL_SECRET_B64=$(printf '{"auths":{"quickstart.invalid":{"auth":"cXM6cXM="}}}' | base64 -w0) \
OPENSHIFT_SSH_AUTHORIZED_KEY="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM7ZSQ/ehyPy8sz+rjNLloxHQxqa9Qy8+c4PFguaYZHS quickstart@ocp-capi" \
	clusterctl generate cluster "$QS_NAME" --kubeconfig "$KC" --config "$QS_RELEASE_DIR/clusterctl.yaml" \
	--infrastructure "openstack:$INFRA" --flavor openstack-agent --target-namespace "$QS_NAME" \
	--control-plane-machine-count "$QS_CONTROL_PLANE" --worker-machine-count "$QS_WORKERS" >"$STATE/$QS_NAME.yaml"
echo "wrote $STATE/$QS_NAME.yaml"

step "kubectl apply -f $STATE/$QS_NAME.yaml"
kubectl --kubeconfig "$KC" create namespace "$QS_NAME" --dry-run=client -o yaml | kubectl --kubeconfig "$KC" apply -f -
kubectl --kubeconfig "$KC" apply -f "$STATE/$QS_NAME.yaml"
APPLIED=$(date +%s)

describe() { clusterctl describe cluster "$QS_NAME" -n "$QS_NAME" --kubeconfig "$KC" --config "$QS_RELEASE_DIR/clusterctl.yaml" "$@" || true; }
available() {
	[ "$(kubectl --kubeconfig "$KC" get openshiftassistedcontrolplane -n "$QS_NAME" "$QS_NAME" \
		-o jsonpath='{.status.conditions[?(@.type=="Available")].status}' 2>/dev/null)" = True ]
}

step "Waiting for the control plane to be Available (clusterctl describe cluster every 20s)"
while ! available; do
	(( $(date +%s) - APPLIED < QS_TIMEOUT )) || { describe --show-conditions all; die "control plane not Available after ${QS_TIMEOUT}s"; }
	printf '\n--- %ss after apply\n' "$(( $(date +%s) - APPLIED ))"
	describe
	sleep 20
done
AVAILABLE=$(date +%s)

# The workers come up with the control plane; give the Machines a moment to
# get their nodeRefs so that the final picture is complete.
for _ in $(seq 60); do
	[ "$(kubectl --kubeconfig "$KC" get cluster -n "$QS_NAME" "$QS_NAME" \
		-o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ] && break
	sleep 2
done

step "Control plane Available $(( AVAILABLE - APPLIED ))s after apply; total $(( AVAILABLE - START ))s"
describe --show-conditions all
kubectl --kubeconfig "$KC" get cluster,machines -n "$QS_NAME" -o wide
cat <<EOF

The cluster $QS_NAME runs on the local OpenStack (openstack --os-cloud $QS_CLOUD server list),
installed by the assisted-service simulator (not a real OpenShift: see docs/e2e.md).
  export KUBECONFIG=$KC
  clusterctl describe cluster $QS_NAME -n $QS_NAME
  kubectl --kubeconfig $STATE/workload.kubeconfig get nodes     # the API server that plays the cluster
  hack/quickstart.sh down                                       # delete it and stop the simulator
EOF
