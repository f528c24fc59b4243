#!/bin/bash
# hack/openstack/smoke.sh - exercise the local cloud made by up.sh with the openstack CLI (about 4 min).
# Checks the objects up.sh provides for the ocp-capi tests (cirros-fake, m1.tiny, m1.small, public,
# demo quotas, app credential), then network/router/SG, image upload, servers on a port and on a
# network, floating IPs, trunks, a server with tags as demo (nova 2.52), PARALLEL=N (default 10)
# concurrent server creates, a cinder volume and an octavia LB. Cleans up after itself.
# Exits 0 only if everything passed.
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export OS_CLIENT_CONFIG_FILE=${OS_CLIENT_CONFIG_FILE:-/etc/openstack/clouds.yaml}
export OS_CLOUD=${OS_CLOUD:-local}
PARALLEL=${PARALLEL:-10}
P=smoke
os() { openstack "$@"; }
t() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$(t)" 'BEGIN{printf "%.1f", b-a}'; }
ok() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILED=1; }
FAILED=0
wait_server() {  # wait_server NAME_OR_ID TIMEOUT -> prints status
  local s i=0
  while :; do
    s=$(os server show "$1" -f value -c status 2>/dev/null || echo GONE)
    case $s in ACTIVE|ERROR) echo $s; return;; esac
    i=$((i+1)); [ $i -gt $(( $2 * 2 )) ] && { echo "TIMEOUT($s)"; return; }; sleep 0.5
  done
}
cleanup() {
  for s in $(os server list -f value -c Name | grep "^$P-" || true); do os server delete --wait "$s" || true; done
  for tr in $(os network trunk list -f value -c Name 2>/dev/null | grep "^$P-" || true); do os network trunk delete "$tr" || true; done
  for p in $(os port list -f value -c Name | grep "^$P-" || true); do os port delete "$p" || true; done
  if os router show $P-router >/dev/null 2>&1; then
    os router remove subnet $P-router $P-subnet 2>/dev/null || true
    os router delete $P-router || true; fi
  os network delete $P-net 2>/dev/null || true
  os security group delete $P-sg 2>/dev/null || true
  os image delete $P-img 2>/dev/null || true
  os flavor delete $P-flavor 2>/dev/null || true
  for s in $(OS_CLOUD=local-demo openstack server list -f value -c Name | grep "^$P-" || true); do OS_CLOUD=local-demo openstack server delete --wait "$s" || true; done
  OS_CLOUD=local-demo openstack network delete $P-demo-net 2>/dev/null || true
  for v in $(os volume list -f value -c Name 2>/dev/null | grep "^$P-" || true); do os volume delete "$v" || true; done
  for lb in $(os loadbalancer list -f value -c name 2>/dev/null | grep "^$P-" || true); do os loadbalancer delete --cascade "$lb" || true; done
}
echo "== cleanup leftovers"; cleanup >/dev/null 2>&1 || true

echo "== auth"
os token issue -f value -c expires >/dev/null && ok "password auth (cloud $OS_CLOUD)"
if grep -q local-appcred "$OS_CLIENT_CONFIG_FILE"; then
  OS_CLOUD=local-appcred openstack token issue -f value -c expires >/dev/null && ok "application credential auth" || fail "appcred auth"
fi
os catalog list -f value -c Type | sort | tr '\n' ' '; echo

echo "== objects made by up.sh for the ocp-capi tests"
[ "$(os image show cirros-fake -f value -c status -c visibility | paste -sd' ')" = "active public" ] && ok "image cirros-fake active+public" || fail "image cirros-fake"
for f in "m1.tiny 1 512 1" "m1.small 1 2048 20"; do
  set -- $f
  got=$(os flavor show $1 -f json | python3 -c 'import json,sys; f=json.load(sys.stdin); print(f["vcpus"], f["ram"], f["disk"], f["os-flavor-access:is_public"])')
  [ "$got" = "$2 $3 $4 True" ] && ok "flavor $1 (vcpus ram disk public: $got)" || fail "flavor $1: $got"
done
set --
[ "$(os network show public -f value -c router:external)" = True ] && ok "external network public" || fail "network public"
q=$(os quota show demo -f json)
python3 -c 'import json,sys; q=json.loads(sys.argv[1]); q={(x["Resource"] if isinstance(x,dict) and "Resource" in x else None):(x.get("Limit") if isinstance(x,dict) else None) for x in q} if isinstance(q,list) else q; need={"instances":50,"cores":200,"ram":409600,"ports":500,"volumes":100,"gigabytes":5000,"networks":100,"routers":50,"secgroups":100,"floating-ips":100}; bad={k:(q.get(k),v) for k,v in need.items() if (q.get(k) or 0)<v}; sys.exit(print("bad quotas (have,want):",bad) or 1) if bad else print("   demo quotas:", {k:q.get(k) for k in need})' "$q" \
  && ok "demo quotas" || fail "demo quotas"

echo "== network / subnet / router / security group"
T=$(t)
os network create $P-net -f value -c id >/dev/null
os subnet create --network $P-net --subnet-range 10.20.0.0/24 $P-subnet -f value -c id >/dev/null
os router create $P-router -f value -c id >/dev/null
os router set --external-gateway public $P-router
os router add subnet $P-router $P-subnet
os security group create $P-sg -f value -c id >/dev/null
os security group rule create --protocol tcp --dst-port 22 --remote-ip 0.0.0.0/0 $P-sg -f value -c id >/dev/null
echo "   router gw: $(os router show $P-router -f json -c external_gateway_info | tr -d '\n ' | cut -c1-160)"
ok "network objects in $(dt $T)s"

echo "== image + flavor"
T=$(t)
IMG=/tmp/$P-tiny.img; head -c 1048576 /dev/zero > $IMG
os image create --disk-format raw --container-format bare --file $IMG $P-img -f value -c id >/dev/null
[ "$(os image show $P-img -f value -c status)" = active ] && ok "image uploaded+active in $(dt $T)s" || fail "image not active"
os flavor create --vcpus 1 --ram 64 --disk 1 $P-flavor -f value -c id >/dev/null && ok flavor

echo "== one server on a pre-created port"
os port create --network $P-net --security-group $P-sg $P-port1 -f value -c id >/dev/null
T=$(t)
os server create --flavor $P-flavor --image $P-img --port $P-port1 $P-vm1 -f value -c id >/dev/null
st=$(wait_server $P-vm1 120); T1=$(dt $T)
[ "$st" = ACTIVE ] && ok "server ACTIVE in ${T1}s (API call -> ACTIVE)" || { fail "server status $st"; os server show $P-vm1 -f value -c fault || true; }
echo "   addresses: $(os server show $P-vm1 -f value -c addresses)"
echo "   port1: $(os port show $P-port1 -f value -c status -c binding_vif_type -c binding_host_id | paste -sd' ')"
fip=$(os floating ip create public -f value -c id)
os server add floating ip $P-vm1 "$(os floating ip show $fip -f value -c floating_ip_address)" \
  && ok "floating IP associated: $(os server show $P-vm1 -f value -c addresses)" || fail "floating ip"
os floating ip delete $fip
T=$(t); os server delete --wait $P-vm1; echo "   deleted in $(dt $T)s"
dev=$(os port show $P-port1 -f value -c device_id); host=$(os port show $P-port1 -f value -c binding_host_id)
[ -z "$dev" ] && [ -z "$host" ] && ok "pre-created port unbound after delete" || fail "port still bound dev=$dev host=$host"
os port delete $P-port1

echo "== one server on a network (nova-created port must be removed on delete)"
os server create --flavor $P-flavor --image $P-img --network $P-net --security-group $P-sg $P-vm2 -f value -c id >/dev/null
st=$(wait_server $P-vm2 120); [ "$st" = ACTIVE ] && ok "vm2 ACTIVE" || fail "vm2 $st"
id=$(os server show $P-vm2 -f value -c id)
n=$(os port list --device-id $id -f value -c ID | wc -l); echo "   ports for vm2 while running: $n"
os server delete --wait $P-vm2
n=$(os port list --device-id $id -f value -c ID | wc -l)
[ "$n" = 0 ] && ok "nova-created port cleaned up" || fail "$n ports left for vm2"

echo "== trunk (parent port + VLAN subport), server on the parent"
if os extension show trunk >/dev/null 2>&1; then
  os port create --network $P-net $P-parent >/dev/null
  os port create --network $P-net $P-sub >/dev/null
  os network trunk create --parent-port $P-parent --subport port=$P-sub,segmentation-type=vlan,segmentation-id=100 $P-trunk >/dev/null
  os server create --flavor $P-flavor --image $P-img --port $P-parent $P-vm3 -f value -c id >/dev/null
  st=$(wait_server $P-vm3 120); [ "$st" = ACTIVE ] && ok "server on trunk parent ACTIVE" || fail "trunk vm $st"
  echo "   trunk: $(os network trunk show $P-trunk -f value -c status -c sub_ports | paste -sd' ' | cut -c1-160)"
  os server delete --wait $P-vm3; os network trunk delete $P-trunk; os port delete $P-sub $P-parent
else fail "no trunk extension"; fi

echo "== $PARALLEL servers created by $PARALLEL concurrent CLI calls"
T=$(t); pids=()
for i in $(seq $PARALLEL); do
  os server create --flavor $P-flavor --image $P-img --network $P-net $P-par-$i -f value -c id >/dev/null 2>/tmp/$P-par-$i.err & pids+=($!)
done
for p in "${pids[@]}"; do wait $p || true; done
echo "   all create calls returned after $(dt $T)s"
n_ok=0
for i in $(seq $PARALLEL); do st=$(wait_server $P-par-$i 300); [ "$st" = ACTIVE ] && n_ok=$((n_ok+1)) || echo "   $P-par-$i: $st $(cat /tmp/$P-par-$i.err 2>/dev/null | tail -1)"; done
TP=$(dt $T)
[ $n_ok = $PARALLEL ] && ok "$n_ok/$PARALLEL parallel servers ACTIVE in ${TP}s" || fail "only $n_ok/$PARALLEL ACTIVE after ${TP}s"
echo "   ports on $P-net: $(os port list --network $P-net --device-owner compute:nova -f value -c ID | wc -l)"
T=$(t); for i in $(seq $PARALLEL); do os server delete $P-par-$i & done; wait
for i in $(seq 120); do [ "$(os server list -f value -c Name | grep -c "^$P-par-" || true)" = 0 ] && break; sleep 1; done
echo "   all deleted after $(dt $T)s"
n=$(os port list --network $P-net --device-owner compute:nova -f value -c ID | wc -l)
[ "$n" = 0 ] && ok "no compute ports left after parallel delete" || fail "$n compute ports left"

echo "== as demo: server with tags (nova microversion 2.52+), m1.tiny + cirros-fake"
D() { OS_CLOUD=local-demo openstack "$@"; }
D network create $P-demo-net -f value -c id >/dev/null
D subnet create --network $P-demo-net --subnet-range 10.21.0.0/24 $P-demo-subnet -f value -c id >/dev/null
D --os-compute-api-version 2.52 server create --flavor m1.tiny --image cirros-fake --network $P-demo-net \
  --tag ocp-capi --tag cluster-smoke $P-demo-vm -f value -c id >/dev/null
s=""; for i in $(seq 240); do s=$(D server show $P-demo-vm -f value -c status); [ "$s" = ACTIVE ] || [ "$s" = ERROR ] && break; sleep 0.5; done
tags=$(D --os-compute-api-version 2.52 server show $P-demo-vm -f json -c tags | tr -d '\n ')
[ "$s" = ACTIVE ] && echo "$tags" | grep -q ocp-capi && ok "demo server ACTIVE with tags $tags" || fail "demo server $s tags $tags"
D server delete --wait $P-demo-vm; D network delete $P-demo-net

if os catalog show volumev3 >/dev/null 2>&1; then
  echo "== cinder volume (fake backend)"
  T=$(t); os volume create --size 1 $P-vol >/dev/null
  for i in $(seq 60); do s=$(os volume show $P-vol -f value -c status); [ "$s" = available ] || [ "$s" = error ] && break; sleep 1; done
  [ "$s" = available ] && ok "volume available in $(dt $T)s" || fail "volume $s"
  os volume delete $P-vol || true
fi
if os catalog show load-balancer >/dev/null 2>&1; then
  echo "== octavia (real API+worker, amphora provider with noop amphora/compute drivers)"
  lb_wait() { local s i; for i in $(seq 60); do s=$(os loadbalancer show $P-lb -f value -c provisioning_status); [ "$s" = ACTIVE ] || [ "$s" = ERROR ] && break; sleep 1; done; echo $s; }
  T=$(t)
  if os loadbalancer create --name $P-lb --vip-subnet-id $P-subnet -f value -c id >/dev/null && [ "$(lb_wait)" = ACTIVE ]; then
    vip=$(os loadbalancer show $P-lb -f value -c vip_port_id)
    ok "loadbalancer ACTIVE in $(dt $T)s, VIP port $(os port show $vip -f value -c fixed_ips | cut -c1-90)"
    os loadbalancer listener create --name $P-lst --protocol TCP --protocol-port 6443 $P-lb >/dev/null; lb_wait >/dev/null
    os loadbalancer pool create --name $P-pool --lb-algorithm ROUND_ROBIN --listener $P-lst --protocol TCP >/dev/null; lb_wait >/dev/null
    os loadbalancer member create --address 10.20.0.10 --protocol-port 6443 --subnet-id $P-subnet $P-pool >/dev/null; lb_wait >/dev/null
    os loadbalancer healthmonitor create --delay 10 --timeout 5 --max-retries 3 --type TCP $P-pool >/dev/null
    [ "$(lb_wait)" = ACTIVE ] && ok "listener/pool/member/healthmonitor ACTIVE" || fail "lb children"
    fip=$(os floating ip create public -f value -c id); os floating ip set --port $vip $fip \
      && ok "floating IP $(os floating ip show $fip -f value -c floating_ip_address) on LB VIP port" || fail "fip on vip"
    os floating ip delete $fip
    os loadbalancer delete --cascade $P-lb
    for i in $(seq 60); do os loadbalancer show $P-lb >/dev/null 2>&1 || break; sleep 1; done
    os loadbalancer show $P-lb >/dev/null 2>&1 && fail "lb not deleted" || ok "lb deleted"
    os port show $vip >/dev/null 2>&1 && { echo "   NOTE: VIP port $vip left behind (worker uses noop network driver); deleting"; os port delete $vip; } || true
  else fail "loadbalancer create"; fi
fi

echo "== cleanup"; cleanup >/dev/null 2>&1 || true
left=$(os port list -f value -c Name -c device_owner | grep -c "^$P-" || true)
[ "$left" = 0 ] && ok "all smoke resources removed" || fail "$left smoke ports left"
echo "== RESULT: $([ $FAILED = 0 ] && echo ALL PASSED || echo SOME FAILED)"
exit $FAILED
