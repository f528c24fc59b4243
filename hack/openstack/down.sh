#!/bin/bash
# hack/openstack/down.sh - stop the daemons started by up.sh, by the pid files in /run/ocp-capi-os
# (never by a name pattern).
#
#   down.sh                 stop everything, then check with ps that nothing of the cloud is left
#   down.sh NAME...         stop only these (e.g. nova-compute neutron); used by up.sh for restarts
#   down.sh --purge         stop everything AND wipe all state (databases, rabbit mnesia, keys,
#                           images, stamps, clouds.yaml, logs) so that the next up.sh configures
#                           from scratch. Packages stay installed; the databases are dropped
#                           through the running mariadb.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN=/run/ocp-capi-os; LOGS=/var/log/ocp-capi-os; STATE=/var/lib/ocp-capi-os
ALL=(octavia-worker octavia-api cinder-volume cinder-scheduler cinder-api nova-compute nova-scheduler
     nova-conductor nova-api neutron placement glance keystone rabbitmq mariadb)
PURGE=0; names=()
for a in "$@"; do case $a in --purge) PURGE=1;; -h|--help) sed -n "2,10p" "$0"; exit 0;; *) names+=("$a");; esac; done
if [ ${#names[@]} -eq 0 ]; then names=("${ALL[@]}"); EVERYTHING=1; else EVERYTHING=0; fi
[ $PURGE = 1 ] && [ $EVERYTHING = 0 ] && { echo "--purge works only without names" >&2; exit 2; }

starttime() { awk '{sub(/^.*\) /, ""); print $20}' "/proc/$1/stat" 2>/dev/null; }
# pid_of NAME: the pid in NAME's pid file if that process is still the one up.sh started
pid_of() {
  local pid st f=$RUN/$1.pid
  [ -f "$f" ] || return 1
  read -r pid st < "$f"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && { [ -z "$st" ] || [ "$(starttime "$pid")" = "$st" ]; } && echo "$pid"
}
group_alive() { ps -eo pgid= | awk -v g="$1" '$1==g{f=1} END{exit !f}'; }  # a process left in group $1

# stop_groups NAME... : SIGTERM to the process group of each (every daemon was started with setsid,
# so pid == process group id), all at once; then wait up to 30 s and SIGKILL what is left.
stop_groups() {
  local n pid i; local -A pids=()
  for n in "$@"; do
    if pid=$(pid_of "$n"); then pids[$n]=$pid; kill -TERM -- -"$pid" 2>/dev/null; fi
    rm -f "$RUN/$n.pid"
  done
  for i in $(seq 150); do
    local left=0
    for n in "${!pids[@]}"; do group_alive "${pids[$n]}" && left=1; done
    [ $left = 0 ] && break; sleep 0.2
  done
  for n in "${!pids[@]}"; do
    if group_alive "${pids[$n]}"; then kill -KILL -- -"${pids[$n]}" 2>/dev/null; echo "killed $n (${pids[$n]}) with SIGKILL"
    else echo "stopped $n (${pids[$n]})"; fi
  done
}

services=(); infra=()
for n in "${names[@]}"; do case $n in rabbitmq|mariadb) infra+=("$n");; *) services+=("$n");; esac; done
[ ${#services[@]} -gt 0 ] && stop_groups "${services[@]}"

# --purge: drop the databases once no service holds a connection (DROP DATABASE waits for the
# metadata locks of open transactions)
if [ $PURGE = 1 ]; then
  if mysqladmin ping >/dev/null 2>&1; then
    for d in keystone glance placement nova_api nova nova_cell0 neutron cinder octavia; do
      timeout 60 mysql -e "DROP DATABASE IF EXISTS $d" || echo "WARNING: could not drop $d"; done
    mysql -e "DROP USER IF EXISTS 'os'@'127.0.0.1'; DROP USER IF EXISTS 'os'@'localhost';"
    echo "dropped the cloud's databases"
  else echo "WARNING: mariadb is not running, databases kept (up.sh migrates them again)"; fi
fi

for n in "${infra[@]}"; do
  pid=$(pid_of "$n") || { rm -f "$RUN/$n.pid"; continue; }
  case $n in
    rabbitmq) # beam.smp runs in a group and session of its own (under su): stop it through rabbitmqctl,
              # then by rabbit's own pid file; its port helpers (erl_child_setup, inet_gethost,
              # rabbit_disk_monitor) end with it
              bp=$(cat /var/lib/rabbitmq/mnesia/rabbit@localhost.pid 2>/dev/null)
              ERL_EPMD_ADDRESS=127.0.0.1 timeout 30 rabbitmqctl -n rabbit@localhost stop >/dev/null 2>&1
              for i in $(seq 50); do [ -n "$bp" ] && kill -0 "$bp" 2>/dev/null || break; sleep 0.2; done
              [ -n "$bp" ] && kill -0 "$bp" 2>/dev/null && kill -TERM "$bp" ;;
    mariadb)  timeout 60 mysqladmin shutdown >/dev/null 2>&1 ;;
  esac
  stop_groups "$n"
done
# epmd is started by rabbitmq as a daemon outside its process group; ask it to exit (no signal)
if [ $EVERYTHING = 1 ] || printf '%s\n' "${names[@]}" | grep -qx rabbitmq; then
  if [ -n "$(pidof epmd)" ]; then epmd -kill >/dev/null 2>&1 && echo "stopped epmd"; fi
fi

if [ $PURGE = 1 ]; then
  echo "purging state"
  rm -rf /var/lib/rabbitmq/mnesia /var/lib/glance/images/* /var/lib/nova/instances/* \
         /etc/keystone/fernet-keys /etc/keystone/credential-keys /etc/octavia/certs "$STATE" "$LOGS" \
         /etc/openstack/clouds.yaml
fi

# Nothing of the cloud may be left: report any live process that looks like one of ours (zombies
# waiting for init to reap them do not count). Nothing is killed by name.
if [ $EVERYTHING = 1 ]; then
  sleep 0.5
  left=$(ps -eo pid=,stat=,user=,args= | awk '$2 !~ /^Z/' | grep -E 'mysqld|mariadbd|beam\.smp|epmd|erl_child_setup|inet_gethost|rabbit_disk_monitor|rabbitmq-server|uwsgi|keystone|glance-api|placement-api|nova-|neutron-|cinder-|octavia-' | grep -v -E 'grep -E|down\.sh' || true)
  if [ -n "$left" ]; then echo "LEFT RUNNING:"; echo "$left"; exit 1; fi
  echo "nothing of the local cloud is running"
fi
exit 0
