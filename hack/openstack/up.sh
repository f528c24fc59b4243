#!/bin/bash
# hack/openstack/up.sh - a small but REAL OpenStack (Zed, Debian bookworm packages) on 127.0.0.1 for
# the ocp-capi OpenStack provider tests: keystone, glance, placement, nova (fake virt driver), neutron
# (ML2 + the "simbind" mechanism driver that binds every port without agents), cinder (fake driver,
# optional) and octavia (noop amphora/compute drivers, optional).
#
# No systemd: every daemon is started here with setsid, pid files in $RUN, logs in $LOGS, state stamps
# in $STATE. Idempotent: configs are rewritten only when their content changes (a changed config
# restarts its daemons), DB migrations run only when config or package version changed, dead daemons
# are restarted, and a second run on a running cloud changes nothing and takes a few seconds.
#
#   WITH_CINDER=0 / WITH_OCTAVIA=0   leave cinder / octavia out (their catalog entries are removed)
#   FORCE=1                          ignore the stamps: re-run every migration and keystone setup step
#
# Stop with hack/openstack/down.sh (down.sh --purge also wipes all state for a from-scratch run).
# Writes /etc/openstack/clouds.yaml with the clouds local (admin), local-demo (member) and
# local-appcred (application credential of demo).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin   # no pyenv shims etc.
unset OS_CLOUD OS_AUTH_URL OS_CLIENT_CONFIG_FILE || true
[ "$(id -u)" = 0 ] || { echo "up.sh must run as root" >&2; exit 1; }

HERE=$(cd "$(dirname "$0")" && pwd)
RUN=/run/ocp-capi-os; LOGS=/var/log/ocp-capi-os; STATE=/var/lib/ocp-capi-os
mkdir -p $RUN $LOGS $STATE
CLOUDS_YAML=/etc/openstack/clouds.yaml
DBPW=dbsecret; SVCPW=svcsecret; ADMINPW=admin; DEMOPW=demo
KS=http://127.0.0.1:5000; REGION=RegionOne; TRANSPORT=rabbit://guest:guest@127.0.0.1:5672/
HOSTNAME_FAKE=os-local           # nova/cinder "host"; shows up as binding:host_id on ports
DB() { echo "mysql+pymysql://os:$DBPW@127.0.0.1/$1?charset=utf8"; }
WITH_CINDER=${WITH_CINDER:-1}; WITH_OCTAVIA=${WITH_OCTAVIA:-1}; FORCE=${FORCE:-0}
SCRIPT_REV=1                     # bump to force every stamp to be redone

T0=$(date +%s.%N); PH_T=$T0; PH_NAME=""
declare -a TIMES=()
dt() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
phase() {  # phase NAME : closes the previous phase, opens a new one
  local now; now=$(date +%s.%N)
  if [ -n "$PH_NAME" ]; then
    TIMES+=("$(printf '%-14s %7.1fs' "$PH_NAME" "$(dt $PH_T $now)")")
    echo ">>> phase $PH_NAME done in $(dt $PH_T $now)s"
  fi
  PH_NAME=$1; PH_T=$now; [ -z "$1" ] || echo ">>> phase $1"
}
# --- daemons -----------------------------------------------------------------------------------
# A pid file holds "PID STARTTIME" (starttime from /proc/PID/stat), so a recycled pid is never
# mistaken for one of ours (down.sh checks the same).
starttime() { awk '{sub(/^.*\) /, ""); print $20}' "/proc/$1/stat" 2>/dev/null; }
alive() {
  local pid st
  [ -f "$RUN/$1.pid" ] || return 1
  read -r pid st < "$RUN/$1.pid" || true
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ -z "$st" -o "$(starttime "$pid")" = "$st" ]
}
declare -A RESTART=()
start() {  # start NAME CMD... : background daemon in its own session; skipped if alive and unchanged
  local n=$1; shift
  if alive "$n" && [ -n "${RESTART[$n]:-}" ]; then
    echo "    $n: config changed, restarting"; bash "$HERE/down.sh" "$n" | sed 's/^/    /'
  fi
  if alive "$n"; then echo "    $n running (pid $(cut -d' ' -f1 $RUN/$n.pid))"; return 0; fi
  setsid nohup "$@" >>"$LOGS/$n.log" 2>&1 < /dev/null &
  local pid=$!
  echo "$pid $(starttime $pid)" > "$RUN/$n.pid"; echo "    started $n pid $pid"
}
wait_tcp() {  # wait_tcp PORT [SECONDS]
  local p=$1 t=${2:-120} i=0
  until (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; do
    i=$((i+1)); [ $i -gt $((t*5)) ] && { echo "timeout waiting for 127.0.0.1:$p" >&2; return 1; }; sleep 0.2
  done
}
uwsgi_start() {  # uwsgi_start NAME PORT WSGI_FILE [extra args]
  local n=$1 p=$2 f=$3; shift 3
  # "Connection: close": uwsgi 2.0.21's --http-socket has no keep-alive; without it clients reuse
  # connections uwsgi already closed and POSTs fail with ConnectionResetError.
  start "$n" /usr/bin/uwsgi --plugin python3 --http-socket 127.0.0.1:$p --wsgi-file "$f" \
     --master --processes 1 --threads 8 --enable-threads --lazy-apps --die-on-term --no-orphans \
     --buffer-size 65535 --add-header "Connection: close" "$@"
}
# --- configs and stamps ------------------------------------------------------------------------
backup() { [ -f "$1" ] && [ ! -f "$1.dist" ] && cp -a "$1" "$1.dist"; return 0; }
cfg() {  # cfg FILE [DAEMON...] <<EOF : write FILE only if its content differs; mark DAEMONs for restart
  local f=$1 tmp; shift
  mkdir -p "$(dirname "$f")"; tmp=$(mktemp "$f.XXXXXX")
  cat > "$tmp"
  if [ -f "$f" ] && cmp -s "$tmp" "$f"; then rm -f "$tmp"; return 0; fi
  backup "$f"
  if [ -f "$f" ]; then chmod --reference="$f" "$tmp"; chown --reference="$f" "$tmp"; else chmod 644 "$tmp"; fi
  mv "$tmp" "$f"; echo "    wrote $f"
  local d; for d in "$@"; do RESTART[$d]=1; done
}
# stamp NAME FILES... : a key over the files, installed package versions and SCRIPT_REV
stampkey() { { echo "$SCRIPT_REV"; dpkg-query -W -f='${Version}\n' $PKGS 2>/dev/null; cat "$@"; } | md5sum | cut -d' ' -f1; }
has_tables() { [ "$(mysql -N -e "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='$1'")" -gt 0 ]; }
fresh() {  # fresh NAME KEY [DB...] : true if the step must run (stamp differs, FORCE, or a DB empty)
  local n=$1 k=$2 d; shift 2
  [ "$FORCE" = 1 ] && return 0
  [ -f "$STATE/$n.stamp" ] && [ "$(cat "$STATE/$n.stamp")" = "$k" ] || return 0
  for d in "$@"; do has_tables "$d" || return 0; done
  echo "    $n: up to date"; return 1
}
done_stamp() { echo "$2" > "$STATE/$1.stamp"; }
authtoken() {  # keystone_authtoken section body for service user $1
cat <<EOF
www_authenticate_uri = $KS
auth_url = $KS
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = $1
password = $SVCPW
region_name = $REGION
service_token_roles_required = true
EOF
}
svcauth() {  # plain keystoneauth section (for [placement], [neutron], [nova], [service_user]...)
cat <<EOF
auth_url = $KS
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = $1
password = $SVCPW
region_name = $REGION
EOF
}

# ---------------------------------------------------------------------------------------------
phase packages
PKGS="mariadb-server rabbitmq-server python3-pymysql keystone glance-api placement-api nova-api
 nova-conductor nova-scheduler python3-nova neutron-common cinder-api cinder-scheduler python3-cinder
 octavia-api python3-openstackclient python3-openstacksdk python3-octaviaclient python3-osc-placement
 python3-yaml uwsgi-plugin-python3 curl openssl procps iproute2"
# maintainer scripts must never start daemons (there is no systemd here anyway). Docker-style images
# ship this file already; it is created only when missing and left in place.
[ -x /usr/sbin/policy-rc.d ] || { printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
if [ "$(dpkg-query -W -f='${db:Status-Abbrev}\n' $PKGS 2>/dev/null | grep -c '^ii')" -lt "$(echo $PKGS | wc -w)" ]; then
  # debconf: every openstack "configure_db / register-endpoint" question defaults to false; make it
  # explicit so that a non-default debconf db cannot bring up dbconfig prompts.
  for p in keystone nova neutron glance cinder placement octavia; do
    echo "$p $p/configure_db boolean false"; done | debconf-set-selections 2>/dev/null || true
  echo "dbconfig-common dbconfig-common/dbconfig-install boolean false" | debconf-set-selections 2>/dev/null || true
  apt-get update -q > $LOGS/apt-update.log 2>&1 || { tail -20 $LOGS/apt-update.log; exit 1; }
  nice apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-confdef \
     -o Dpkg::Options::=--force-confold $PKGS > $LOGS/apt-install.log 2>&1 || { tail -30 $LOGS/apt-install.log; exit 1; }
  echo "    installed $(grep -c '^Setting up' $LOGS/apt-install.log) packages"
else echo "    all packages installed"; fi

# ---------------------------------------------------------------------------------------------
phase infra
cfg /etc/mysql/mariadb.conf.d/99-ocp-capi-os.cnf mariadb <<EOF
[mysqld]
bind-address = 127.0.0.1
max_connections = 1000
innodb_buffer_pool_size = 128M
skip-name-resolve
EOF
if ! mysqladmin ping >/dev/null 2>&1 || [ -n "${RESTART[mariadb]:-}" ]; then
  mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
  start mariadb /usr/bin/mysqld_safe
  for i in $(seq 120); do mysqladmin ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
mysql -e "CREATE USER IF NOT EXISTS 'os'@'127.0.0.1' IDENTIFIED BY '$DBPW'; CREATE USER IF NOT EXISTS 'os'@'localhost' IDENTIFIED BY '$DBPW';"
for d in keystone glance placement nova_api nova nova_cell0 neutron cinder octavia; do
  mysql -e "CREATE DATABASE IF NOT EXISTS $d CHARACTER SET utf8mb4; GRANT ALL ON $d.* TO 'os'@'127.0.0.1'; GRANT ALL ON $d.* TO 'os'@'localhost';"
done
# RabbitMQ on loopback only (AMQP, epmd and erlang distribution), node name rabbit@localhost
cfg /etc/rabbitmq/rabbitmq-env.conf rabbitmq <<'EOF'
NODENAME=rabbit@localhost
NODE_IP_ADDRESS=127.0.0.1
NODE_PORT=5672
export ERL_EPMD_ADDRESS=127.0.0.1
SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} -kernel inet_dist_listen_min 25672 -kernel inet_dist_listen_max 25672"
CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
EOF
cfg /etc/rabbitmq/rabbitmq.conf rabbitmq <<'EOF'
listeners.tcp.default = 127.0.0.1:5672
loopback_users.guest = true
EOF
export ERL_EPMD_ADDRESS=127.0.0.1
chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
start rabbitmq su rabbitmq -s /bin/sh -c 'ERL_EPMD_ADDRESS=127.0.0.1 exec /usr/sbin/rabbitmq-server'
wait_tcp 5672 120

# ---------------------------------------------------------------------------------------------
phase keystone
cfg /etc/keystone/keystone.conf keystone <<EOF
[DEFAULT]
[database]
connection = $(DB keystone)
[token]
provider = fernet
expiration = 86400
[fernet_tokens]
key_repository = /etc/keystone/fernet-keys/
[credential]
key_repository = /etc/keystone/credential-keys/
EOF
[ -d /etc/keystone/fernet-keys ] || keystone-manage fernet_setup --keystone-user keystone --keystone-group keystone >> $LOGS/keystone-manage.log 2>&1
[ -d /etc/keystone/credential-keys ] || keystone-manage credential_setup --keystone-user keystone --keystone-group keystone >> $LOGS/keystone-manage.log 2>&1
K=$(stampkey /etc/keystone/keystone.conf)
if fresh keystone "$K" keystone; then
  keystone-manage db_sync >> $LOGS/keystone-manage.log 2>&1
  keystone-manage bootstrap --bootstrap-password "$ADMINPW" --bootstrap-admin-url $KS/v3/ \
    --bootstrap-internal-url $KS/v3/ --bootstrap-public-url $KS/v3/ --bootstrap-region-id $REGION \
    >> $LOGS/keystone-manage.log 2>&1
  done_stamp keystone "$K"
  rm -f $STATE/ks-objects.stamp
fi
uwsgi_start keystone 5000 /usr/bin/keystone-wsgi-public --uid keystone --gid keystone
wait_tcp 5000
for i in $(seq 100); do curl -sf $KS/v3 >/dev/null && break; sleep 0.3; done

phase ks-objects
# users / projects / roles / services / endpoints, idempotently, in one python process (the CLI
# costs ~1.5 s of start-up per call). Catalog entries follow WITH_CINDER / WITH_OCTAVIA.
KSPY=$(cat <<EOF
from keystoneauth1.identity import v3
from keystoneauth1 import session
from keystoneclient.v3 import client
s = session.Session(auth=v3.Password(auth_url="$KS/v3", username="admin", password="$ADMINPW",
    project_name="admin", user_domain_id="default", project_domain_id="default"))
ks = client.Client(session=s)
def one(mgr, **kw):
    r = list(mgr.list(**kw))
    return r[0] if r else None
dom = ks.domains.get("default")
def project(name):
    return one(ks.projects, name=name) or ks.projects.create(name, dom)
def role(name):
    return one(ks.roles, name=name) or ks.roles.create(name)
def user(name, pw, proj):
    u = one(ks.users, name=name)
    if not u:
        u = ks.users.create(name, domain=dom, password=pw, default_project=proj)
        print("    created user", name)
    return u
def grant(r, u, p):
    if not ks.role_assignments.list(user=u, project=p, role=r):
        ks.roles.grant(r, user=u, project=p)
service = project("service"); demo = project("demo")
r_admin, r_member, r_reader, r_service = role("admin"), role("member"), role("reader"), role("service")
for r in ("load-balancer_member", "load-balancer_admin", "creator"): role(r)
for n in ("glance", "placement", "nova", "neutron", "cinder", "octavia"):
    u = user(n, "$SVCPW", service)
    grant(r_admin, u, service); grant(r_service, u, service)
d = user("demo", "$DEMOPW", demo)
grant(r_member, d, demo); grant(role("load-balancer_member"), d, demo)
grant(r_admin, one(ks.users, name="admin"), demo)
svcs = [("glance", "image", "http://127.0.0.1:9292", True),
        ("placement", "placement", "http://127.0.0.1:8778", True),
        ("nova", "compute", "http://127.0.0.1:8774/v2.1", True),
        ("neutron", "network", "http://127.0.0.1:9696", True),
        ("cinderv3", "volumev3", "http://127.0.0.1:8776/v3/%(project_id)s", $WITH_CINDER == 1),
        ("cinder", "block-storage", "http://127.0.0.1:8776/v3/%(project_id)s", $WITH_CINDER == 1),
        ("octavia", "load-balancer", "http://127.0.0.1:9876", $WITH_OCTAVIA == 1)]
for name, typ, url, enabled in svcs:
    sv = one(ks.services, type=typ)
    if not enabled:
        if sv:
            ks.services.delete(sv); print("    removed", typ, "from the catalog")
        continue
    sv = sv or ks.services.create(name, type=typ)
    have = {e.interface: e for e in ks.endpoints.list(service=sv)}
    for itf in ("public", "internal", "admin"):
        if itf not in have:
            ks.endpoints.create(sv, url, interface=itf, region="$REGION")
        elif have[itf].url != url:
            ks.endpoints.update(have[itf], url=url)
print("    keystone objects ok")
EOF
)
K=$(echo "$KSPY" | md5sum | cut -d' ' -f1)-$(cat $STATE/keystone.stamp)
if fresh ks-objects "$K"; then
  /usr/bin/python3 -c "$KSPY"; done_stamp ks-objects "$K"
fi

# ---------------------------------------------------------------------------------------------
phase glance
mkdir -p /var/lib/glance/images /var/lib/glance/staging /var/lib/glance/tasks /var/lib/glance/lock
cfg /etc/glance/glance-api.conf glance <<EOF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = 9292
workers = 1
enabled_backends = fs:file
show_image_direct_url = false
[database]
connection = $(DB glance)
[glance_store]
default_backend = fs
[fs]
filesystem_store_datadir = /var/lib/glance/images/
[os_glance_staging_store]
filesystem_store_datadir = /var/lib/glance/staging/
[os_glance_tasks_store]
filesystem_store_datadir = /var/lib/glance/tasks/
[paste_deploy]
flavor = keystone
[keystone_authtoken]
$(authtoken glance)
[oslo_concurrency]
lock_path = /var/lib/glance/lock
EOF
K=$(stampkey /etc/glance/glance-api.conf)
if fresh glance "$K" glance; then
  glance-manage db_sync >> $LOGS/glance-manage.log 2>&1; done_stamp glance "$K"
fi
start glance /usr/bin/glance-api --config-file /etc/glance/glance-api.conf

# ---------------------------------------------------------------------------------------------
phase placement
cfg /etc/placement/placement.conf placement <<EOF
[DEFAULT]
[api]
auth_strategy = keystone
[placement_database]
connection = $(DB placement)
[keystone_authtoken]
$(authtoken placement)
EOF
K=$(stampkey /etc/placement/placement.conf)
if fresh placement "$K" placement; then
  placement-manage db sync >> $LOGS/placement-manage.log 2>&1; done_stamp placement "$K"
fi
uwsgi_start placement 8778 /usr/bin/placement-api

# ---------------------------------------------------------------------------------------------
phase neutron
# simbind: ML2 mechanism driver that binds every port on any host (vif_type ovs) and marks it
# ACTIVE, standing in for the L2 agent we do not run. Registered through an entry point.
PYV=$(/usr/bin/python3 -c 'import sys;print("%d.%d"%sys.version_info[:2])')
SP=/usr/local/lib/python$PYV/dist-packages
cfg $SP/os_sim_mech.py neutron <<'EOF'
"""simbind: ML2 mechanism driver that binds every port without any agent (test clouds only)."""
from neutron_lib.api.definitions import portbindings
from neutron_lib import constants
from neutron_lib.plugins.ml2 import api


class SimBindMechanismDriver(api.MechanismDriver):
    def initialize(self):
        pass

    def bind_port(self, context):
        for seg in context.segments_to_bind:
            context.set_binding(seg[api.ID], portbindings.VIF_TYPE_OVS,
                                {portbindings.CAP_PORT_FILTER: True,
                                 portbindings.OVS_HYBRID_PLUG: False},
                                status=constants.PORT_STATUS_ACTIVE)
            return
EOF
cfg $SP/os_sim_mech-0.1.dist-info/METADATA neutron < <(printf 'Metadata-Version: 2.1\nName: os-sim-mech\nVersion: 0.1\n')
cfg $SP/os_sim_mech-0.1.dist-info/entry_points.txt neutron < <(printf '[neutron.ml2.mechanism_drivers]\nsimbind = os_sim_mech:SimBindMechanismDriver\n')
[ -f $SP/os_sim_mech-0.1.dist-info/RECORD ] || : > $SP/os_sim_mech-0.1.dist-info/RECORD
mkdir -p /var/lib/neutron/lock
cfg /etc/neutron/neutron.conf neutron <<EOF
[DEFAULT]
bind_host = 127.0.0.1
bind_port = 9696
core_plugin = ml2
service_plugins = router,trunk,segments
auth_strategy = keystone
transport_url = $TRANSPORT
allow_overlapping_ips = true
notify_nova_on_port_status_changes = true
notify_nova_on_port_data_changes = true
api_workers = 1
rpc_workers = 0
rpc_state_report_workers = 0
state_path = /var/lib/neutron
[database]
connection = $(DB neutron)
[keystone_authtoken]
$(authtoken neutron)
[nova]
$(svcauth nova)
[placement]
$(svcauth placement)
[oslo_concurrency]
lock_path = /var/lib/neutron/lock
[agent]
root_helper = sudo /usr/bin/neutron-rootwrap /etc/neutron/rootwrap.conf
EOF
cfg /etc/neutron/plugins/ml2/ml2_conf.ini neutron <<EOF
[ml2]
type_drivers = flat,vlan,vxlan
tenant_network_types = vxlan
# simbind binds; openvswitch is listed only so that the trunk plugin finds a compatible trunk driver
mechanism_drivers = simbind,openvswitch
extension_drivers = port_security
[ml2_type_flat]
flat_networks = public
[ml2_type_vlan]
network_vlan_ranges = public
[ml2_type_vxlan]
vni_ranges = 1:10000
[securitygroup]
enable_security_group = true
EOF
K=$(stampkey /etc/neutron/neutron.conf /etc/neutron/plugins/ml2/ml2_conf.ini)
if fresh neutron "$K" neutron; then
  nice neutron-db-manage --config-file /etc/neutron/neutron.conf --config-file /etc/neutron/plugins/ml2/ml2_conf.ini \
     upgrade heads >> $LOGS/neutron-db-manage.log 2>&1
  done_stamp neutron "$K"
fi
start neutron /usr/bin/neutron-server --config-file /etc/neutron/neutron.conf \
   --config-file /etc/neutron/plugins/ml2/ml2_conf.ini

# ---------------------------------------------------------------------------------------------
phase nova
NOVA_ALL="nova-api nova-conductor nova-scheduler nova-compute"
mkdir -p /var/lib/nova/instances /var/lib/nova/lock
cfg /etc/nova/nova.conf $NOVA_ALL <<EOF
[DEFAULT]
host = $HOSTNAME_FAKE
my_ip = 127.0.0.1
transport_url = $TRANSPORT
enabled_apis = osapi_compute
osapi_compute_listen = 127.0.0.1
osapi_compute_workers = 1
metadata_listen = 127.0.0.1
compute_driver = fake.FakeDriver
state_path = /var/lib/nova
instances_path = /var/lib/nova/instances
vif_plugging_is_fatal = false
vif_plugging_timeout = 0
allow_resize_to_same_host = true
[api]
auth_strategy = keystone
[api_database]
connection = $(DB nova_api)
[database]
connection = $(DB nova)
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 10
[keystone_authtoken]
$(authtoken nova)
[service_user]
send_service_user_token = true
$(svcauth nova)
[placement]
$(svcauth placement)
[neutron]
$(svcauth neutron)
[cinder]
os_region_name = $REGION
$(svcauth cinder)
[glance]
region_name = $REGION
[oslo_concurrency]
lock_path = /var/lib/nova/lock
[wsgi]
api_paste_config = /etc/nova/api-paste.ini
[vnc]
enabled = false
[os_vif_ovs]
ovsdb_connection = tcp:127.0.0.1:6640
EOF
K=$(stampkey /etc/nova/nova.conf)
if fresh nova "$K" nova_api nova nova_cell0; then
  nice nova-manage api_db sync >> $LOGS/nova-manage.log 2>&1
  cells=$(nova-manage cell_v2 list_cells 2>/dev/null || true)
  echo "$cells" | grep -q ' cell0 ' || nova-manage cell_v2 map_cell0 --database_connection "$(DB nova_cell0)" >> $LOGS/nova-manage.log 2>&1
  echo "$cells" | grep -q ' cell1 ' || nova-manage cell_v2 create_cell --name cell1 --verbose >> $LOGS/nova-manage.log 2>&1
  nice nova-manage db sync >> $LOGS/nova-manage.log 2>&1
  done_stamp nova "$K"
fi
# nova-compute without the Debian nova-compute package (which drags in libvirt+qemu via nova-compute-kvm)
cfg /usr/local/bin/nova-compute-fake nova-compute <<'EOF'
#!/usr/bin/python3
# nova-compute (fake virt driver) for hack/openstack/up.sh
import sys
from nova.cmd.compute import main
sys.exit(main())
EOF
chmod +x /usr/local/bin/nova-compute-fake
start nova-api /usr/bin/nova-api --config-file /etc/nova/nova.conf
start nova-conductor /usr/bin/nova-conductor --config-file /etc/nova/nova.conf
start nova-scheduler /usr/bin/nova-scheduler --config-file /etc/nova/nova.conf
start nova-compute /usr/local/bin/nova-compute-fake --config-file /etc/nova/nova.conf

# ---------------------------------------------------------------------------------------------
phase cinder
CINDER_ALL="cinder-api cinder-scheduler cinder-volume"
if [ "$WITH_CINDER" = 1 ]; then
mkdir -p /var/lib/cinder/lock
# The stock fake driver fails volumes made from an image (qemu-img has no device to write to).
# This subclass skips the copy, like every other data-plane step of the fake, so boot-from-volume
# works.
cfg $SP/ocp_capi_fake_cinder.py cinder-volume <<'EOF'
"""Fake Cinder driver that also accepts volumes made from images (test clouds only)."""
from cinder.tests import fake_driver


class ImageVolumeFakeDriver(fake_driver.FakeLoggingVolumeDriver):
    def copy_image_to_volume(self, context, volume, image_service, image_id, disable_sparse=False):
        return None

    def copy_image_to_encrypted_volume(self, context, volume, image_service, image_id):
        return None
EOF
cfg /etc/cinder/cinder.conf $CINDER_ALL <<EOF
[DEFAULT]
host = $HOSTNAME_FAKE
osapi_volume_listen = 127.0.0.1
osapi_volume_workers = 1
transport_url = $TRANSPORT
auth_strategy = keystone
enabled_backends = fake
state_path = /var/lib/cinder
[database]
connection = $(DB cinder)
[keystone_authtoken]
$(authtoken cinder)
[service_user]
send_service_user_token = true
$(svcauth cinder)
[nova]
$(svcauth nova)
[oslo_concurrency]
lock_path = /var/lib/cinder/lock
[fake]
volume_driver = ocp_capi_fake_cinder.ImageVolumeFakeDriver
volume_backend_name = fake
EOF
K=$(stampkey /etc/cinder/cinder.conf)
if fresh cinder "$K" cinder; then
  nice cinder-manage db sync >> $LOGS/cinder-manage.log 2>&1; done_stamp cinder "$K"
fi
cfg /usr/local/bin/cinder-volume-fake cinder-volume <<'EOF'
#!/usr/bin/python3
# cinder-volume (fake driver) without the Debian cinder-volume package (lvm2, tgt)
import sys
from cinder.cmd.volume import main
sys.exit(main())
EOF
chmod +x /usr/local/bin/cinder-volume-fake
start cinder-api /usr/bin/cinder-api --config-file /etc/cinder/cinder.conf
start cinder-scheduler /usr/bin/cinder-scheduler --config-file /etc/cinder/cinder.conf
start cinder-volume /usr/local/bin/cinder-volume-fake --config-file /etc/cinder/cinder.conf
else
  echo "    WITH_CINDER=0"; bash "$HERE/down.sh" $CINDER_ALL | sed 's/^/    /'
fi

# ---------------------------------------------------------------------------------------------
phase octavia
OCTAVIA_ALL="octavia-api octavia-worker"
if [ "$WITH_OCTAVIA" = 1 ]; then
# the amphora flow signs amphora certs even with noop drivers: a throw-away local CA
C=/etc/octavia/certs; mkdir -p $C/private
if [ ! -f $C/ca_01.pem ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=ocp-capi-os-octavia-ca \
    -keyout $C/private/cakey.pem -out $C/ca_01.pem 2>/dev/null
  cp $C/ca_01.pem $C/server_ca.pem; cat $C/ca_01.pem $C/private/cakey.pem > $C/client.pem
fi
cfg /etc/octavia/octavia.conf $OCTAVIA_ALL <<EOF
[DEFAULT]
transport_url = $TRANSPORT
[api_settings]
bind_host = 127.0.0.1
bind_port = 9876
auth_strategy = keystone
enabled_provider_drivers = amphora:Amphora provider with noop amphora/compute/network drivers
default_provider_driver = amphora
[controller_worker]
# octavia's "noop" test setup: real API + worker + DB flows, but no VMs, no haproxy
amphora_driver = amphora_noop_driver
compute_driver = compute_noop_driver
# the API side allocates a REAL neutron VIP port (allowed_address_pairs driver); the worker gets the
# noop network driver through octavia-worker.conf (it would otherwise plug the VIP into amphorae)
network_driver = allowed_address_pairs_driver
loadbalancer_topology = SINGLE
workers = 1
client_ca = $C/ca_01.pem
[certificates]
ca_certificate = $C/ca_01.pem
ca_private_key = $C/private/cakey.pem
[haproxy_amphora]
client_cert = $C/client.pem
server_ca = $C/server_ca.pem
[health_manager]
bind_ip = 127.0.0.1
[database]
connection = $(DB octavia)
[keystone_authtoken]
$(authtoken octavia)
[service_auth]
$(svcauth octavia)
[oslo_messaging]
topic = octavia_prov
EOF
cfg /etc/octavia/octavia-worker.conf octavia-worker < <(printf '[controller_worker]\nnetwork_driver = network_noop_driver\n')
K=$(stampkey /etc/octavia/octavia.conf)
if fresh octavia "$K" octavia; then
  nice octavia-db-manage --config-file /etc/octavia/octavia.conf upgrade head >> $LOGS/octavia-db-manage.log 2>&1
  done_stamp octavia "$K"
fi
start octavia-api /usr/bin/octavia-api --config-file /etc/octavia/octavia.conf
start octavia-worker /usr/bin/octavia-worker --config-file /etc/octavia/octavia.conf --config-file /etc/octavia/octavia-worker.conf
else
  echo "    WITH_OCTAVIA=0"; bash "$HERE/down.sh" $OCTAVIA_ALL | sed 's/^/    /'
fi

# ---------------------------------------------------------------------------------------------
phase wait-apis
for p in 9292 8778 9696 8774; do wait_tcp $p 180; done
[ "$WITH_CINDER" = 1 ] && wait_tcp 8776 180
[ "$WITH_OCTAVIA" = 1 ] && wait_tcp 9876 180

phase cloud-objects
# One openstacksdk process: fake hypervisor registered, external network "public", image
# "cirros-fake", flavors m1.tiny / m1.small, demo quotas, the demo application credential, and
# clouds.yaml. Each object is checked first and created or fixed only when missing or different.
mkdir -p /etc/openstack
KS=$KS REGION=$REGION ADMINPW=$ADMINPW DEMOPW=$DEMOPW CLOUDS_YAML=$CLOUDS_YAML STATE=$STATE \
WITH_CINDER=$WITH_CINDER WITH_OCTAVIA=$WITH_OCTAVIA \
  /usr/bin/python3 "$HERE/cloud_objects.py"

phase ""
echo "==== phase timings"; printf '%s\n' "${TIMES[@]}"
printf 'TOTAL          %7.1fs\n' "$(dt $T0 $(date +%s.%N))"
echo "==== TCP listeners of the cloud's processes (all must be loopback)"
pids=" $(for f in $RUN/*.pid; do cut -d' ' -f1 "$f"; done | tr '\n' ' ')"
ss -ltnpH | while read -r _ _ _ addr _ users; do
  for pid in $(echo "$users" | grep -o 'pid=[0-9]*' | cut -d= -f2 || true); do
    # a listener belongs to the cloud if its process is in the session of one of our daemons
    # (beam.smp and epmd of rabbitmq detach from it: matched by name)
    # (a process may exit between ss and ps: no listener of ours then)
    sid=$( (ps -o sid= -p "$pid" 2>/dev/null || true) | tr -d ' ')
    name=$(ps -o comm= -p "$pid" 2>/dev/null || true)
    case "$pids" in *" $sid "*) echo "$addr($name)"; break;; esac
    case "$name" in beam.smp|epmd) echo "$addr($name)"; break;; esac
  done
done | sort -u | tr '\n' ' '; echo
echo "clouds.yaml: $CLOUDS_YAML (clouds: local, local-demo, local-appcred)"
