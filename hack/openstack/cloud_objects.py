#!/usr/bin/python3
"""cloud_objects.py - the objects the ocp-capi tests expect in the local cloud (called by up.sh).

Idempotent: every object is read first and created or corrected only when it is missing or differs,
so a second run changes nothing. Plain REST through keystoneauth1 (no CLI, no openstacksdk import):
one process, a few dozen requests.

  - the fake nova-compute is registered (cell mapping, hypervisor listed)
  - external flat network "public" with subnet "public-subnet" 172.24.4.0/24 (like devstack's)
  - public raw image "cirros-fake" (1 MiB of zeros; the fake virt driver never boots it)
  - public flavors m1.tiny (1 vCPU, 512 MiB, 1 GiB) and m1.small (1 vCPU, 2048 MiB, 20 GiB)
  - with octavia: load balancer flavor "ocp-capi-single" (amphora, SINGLE topology) and availability
    zone "ocp-capi-az" (amphora, compute zone nova), each with its profile
  - quotas of project demo: room for 20 servers with 3 ports and 2 volumes each, plus headroom
  - application credential "ocp-capi-local" of user demo
  - /etc/openstack/clouds.yaml with local (admin), local-demo (member), local-appcred
  - prints the nova microversion range and the neutron extensions; saves them in $STATE/info.json
"""
import json
import os
import subprocess
import sys
import time

import yaml
from keystoneauth1 import exceptions as ksexc
from keystoneauth1 import session as kssession
from keystoneauth1.identity import v3

KS = os.environ.get("KS", "http://127.0.0.1:5000")
REGION = os.environ.get("REGION", "RegionOne")
ADMINPW = os.environ.get("ADMINPW", "admin")
DEMOPW = os.environ.get("DEMOPW", "demo")
CLOUDS_YAML = os.environ.get("CLOUDS_YAML", "/etc/openstack/clouds.yaml")
STATE = os.environ.get("STATE", "/var/lib/ocp-capi-os")
WITH_CINDER = os.environ.get("WITH_CINDER", "1") == "1"
WITH_OCTAVIA = os.environ.get("WITH_OCTAVIA", "1") == "1"
APPCRED_NAME = "ocp-capi-local"

FLAVORS = {  # name: (vcpus, ram MiB, disk GiB)
    "m1.tiny": (1, 512, 1),
    "m1.small": (1, 2048, 20),
}
IMAGE_NAME = "cirros-fake"
IMAGE_SIZE = 1 << 20
# 20 servers x (3 ports, 2 volumes) plus headroom for routers, LB VIPs, bastions and leftovers.
COMPUTE_QUOTA = {"instances": 50, "cores": 200, "ram": 409600,
                 "server_groups": 50, "server_group_members": 50}
NETWORK_QUOTA = {"network": 100, "subnet": 100, "port": 500, "router": 50, "floatingip": 100,
                 "security_group": 100, "security_group_rule": 1000}
VOLUME_QUOTA = {"volumes": 100, "gigabytes": 5000, "snapshots": 100}

INTERESTING_EXT = ["trunk", "standard-attr-tag", "tag-ext", "port-security", "router", "extraroute",
                   "extraroute-atomic", "external-net", "allowed-address-pairs", "binding",
                   "security-group", "quotas", "standard-attr-description", "dns-integration",
                   "availability_zone", "network_availability_zone", "router_availability_zone",
                   "subnet_allocation", "segment", "provider", "l3-ha", "dvr", "qos",
                   "ip-substring-filtering", "filter-validation", "port-mac-address-regenerate",
                   "net-mtu", "net-mtu-writable", "fip-port-details", "revision-if-match"]

changed = []


def log(msg):
    print("    " + msg, flush=True)


def password_session(user, pw, project):
    return kssession.Session(auth=v3.Password(
        auth_url=KS + "/v3", username=user, password=pw, project_name=project,
        user_domain_name="Default", project_domain_name="Default"))


def call(sess, method, url, ok=(200, 201, 202, 204), tries=60, **kw):
    """One request; retries connection errors and 5xx for a while (services may still be starting)."""
    last = None
    for _ in range(tries):
        try:
            r = sess.request(url, method, raise_exc=False, **kw)
        except (ksexc.ConnectFailure, ksexc.ConnectTimeout, ksexc.DiscoveryFailure) as e:
            last = e
            time.sleep(1)
            continue
        if r.status_code in ok:
            return r
        if r.status_code >= 500 or r.status_code == 409 and method == "GET":
            last = "%s %s -> %d %s" % (method, url, r.status_code, r.text[:300])
            time.sleep(1)
            continue
        raise SystemExit("%s %s -> %d %s" % (method, url, r.status_code, r.text[:500]))
    raise SystemExit("giving up: %s" % last)


def endpoint(sess, service_type):
    return sess.get_endpoint(service_type=service_type, interface="public",
                             region_name=REGION).rstrip("/")


def main():
    admin = password_session("admin", ADMINPW, "admin")
    demo = password_session("demo", DEMOPW, "demo")
    nova = endpoint(admin, "compute")
    neutron = endpoint(admin, "network") + "/v2.0"
    glance = endpoint(admin, "image") + "/v2"
    demo_project = demo.get_project_id()
    demo_user = demo.get_user_id()

    # --- nova microversions, neutron extensions ---------------------------------------------
    ver = call(admin, "GET", nova + "/", authenticated=False).json()["version"]
    exts = sorted(e["alias"] for e in call(admin, "GET", neutron + "/extensions").json()["extensions"])
    log("nova API %s: microversions %s .. %s" % (ver["id"], ver["min_version"], ver["version"]))
    log("neutron: %d extensions; %s" % (len(exts), ", ".join(
        "%s=%s" % (a, "yes" if a in exts else "NO") for a in INTERESTING_EXT)))
    info = {"nova_min_microversion": ver["min_version"], "nova_max_microversion": ver["version"],
            "neutron_extensions": exts}
    if WITH_OCTAVIA:
        lbv = call(admin, "GET", endpoint(admin, "load-balancer") + "/", authenticated=False).json()
        cur = [v["id"] for v in lbv.get("versions", []) if v.get("status") == "CURRENT"]
        info["octavia_current_version"] = cur[0] if cur else None
        log("octavia API current version: %s" % info["octavia_current_version"])
    if WITH_CINDER:
        cinder_root = "/".join(endpoint(admin, "volumev3").split("/")[:3]) + "/"
        cvs = call(admin, "GET", cinder_root, ok=(200, 300), authenticated=False).json()["versions"]
        cv = [v for v in cvs if v["id"].startswith("v3")][0]
        info["cinder_max_microversion"] = cv["version"]
        log("cinder API %s: microversions %s .. %s" % (cv["id"], cv["min_version"], cv["version"]))
    os.makedirs(STATE, exist_ok=True)
    with open(os.path.join(STATE, "info.json"), "w") as f:
        json.dump(info, f, indent=1)

    # --- external network "public" -----------------------------------------------------------
    nets = call(admin, "GET", neutron + "/networks?name=public").json()["networks"]
    if nets:
        net = nets[0]
    else:
        net = call(admin, "POST", neutron + "/networks", json={"network": {
            "name": "public", "router:external": True, "shared": True,
            "provider:network_type": "flat", "provider:physical_network": "public"}}).json()["network"]
        changed.append("network public")
    subs = call(admin, "GET", neutron + "/subnets?name=public-subnet&network_id=" + net["id"]).json()["subnets"]
    if not subs:
        call(admin, "POST", neutron + "/subnets", json={"subnet": {
            "network_id": net["id"], "name": "public-subnet", "cidr": "172.24.4.0/24", "ip_version": 4,
            "enable_dhcp": False, "gateway_ip": "172.24.4.1"}})
        changed.append("subnet public-subnet")

    # --- flavors -----------------------------------------------------------------------------
    have = call(admin, "GET", nova + "/flavors/detail?is_public=None").json()["flavors"]
    for name, (vcpus, ram, disk) in FLAVORS.items():
        same = [f for f in have if f["name"] == name]
        good = [f for f in same if (f["vcpus"], f["ram"], f["disk"]) == (vcpus, ram, disk)
                and f.get("os-flavor-access:is_public", True)]
        if good:
            continue
        for f in same:  # flavors are immutable: replace a wrong one
            call(admin, "DELETE", nova + "/flavors/" + f["id"])
        call(admin, "POST", nova + "/flavors", json={"flavor": {
            "name": name, "vcpus": vcpus, "ram": ram, "disk": disk,
            "os-flavor-access:is_public": True}})
        changed.append("flavor " + name)

    # --- image -------------------------------------------------------------------------------
    imgs = call(admin, "GET", glance + "/images?name=" + IMAGE_NAME).json()["images"]
    good = [i for i in imgs if i["status"] == "active" and i["visibility"] == "public"]
    if not good:
        for i in imgs:
            call(admin, "DELETE", glance + "/images/" + i["id"])
        img = call(admin, "POST", glance + "/images", json={
            "name": IMAGE_NAME, "disk_format": "raw", "container_format": "bare",
            "visibility": "public", "min_disk": 0, "min_ram": 0}).json()
        call(admin, "PUT", glance + "/images/%s/file" % img["id"], data=b"\0" * IMAGE_SIZE,
             headers={"Content-Type": "application/octet-stream"})
        for _ in range(60):
            if call(admin, "GET", glance + "/images/" + img["id"]).json()["status"] == "active":
                break
            time.sleep(0.5)
        else:
            raise SystemExit("image %s did not become active" % IMAGE_NAME)
        changed.append("image " + IMAGE_NAME)

    # --- octavia flavor and availability zone (admin-only objects; members may use them) ----
    if WITH_OCTAVIA:
        lbaas = endpoint(admin, "load-balancer") + "/v2/lbaas"

        def octavia_pair(kind, one, listkey, profiles, profile_one, profile_listkey, profile_key, data_key,
                         data, name):
            """A profile and the flavor or availability zone using it, both named name."""
            prof = call(admin, "GET", "%s/%s?name=%s" % (lbaas, profiles, name)).json()[profile_listkey]
            if not prof:
                prof = [call(admin, "POST", "%s/%s" % (lbaas, profiles), json={profile_one: {
                    "name": name, "provider_name": "amphora", data_key: json.dumps(data)}}).json()[profile_one]]
                changed.append("octavia %s %s" % (profile_one, name))
            if not call(admin, "GET", "%s/%s?name=%s" % (lbaas, kind, name)).json()[listkey]:
                call(admin, "POST", "%s/%s" % (lbaas, kind), json={one: {
                    "name": name, profile_key: prof[0]["id"], "enabled": True}})
                changed.append("octavia %s %s" % (one, name))
        octavia_pair("flavors", "flavor", "flavors", "flavorprofiles", "flavorprofile", "flavorprofiles",
                     "flavor_profile_id", "flavor_data", {"loadbalancer_topology": "SINGLE"}, "ocp-capi-single")
        octavia_pair("availabilityzones", "availability_zone", "availability_zones", "availabilityzoneprofiles",
                     "availability_zone_profile", "availability_zone_profiles", "availability_zone_profile_id",
                     "availability_zone_data", {"compute_zone": "nova"}, "ocp-capi-az")

    # --- quotas of demo ----------------------------------------------------------------------
    def quota(name, url, wrap, want):
        cur = call(admin, "GET", url).json()[wrap]
        diff = {k: v for k, v in want.items() if cur.get(k) != v}
        if diff:
            call(admin, "PUT", url, json={wrap: diff})
            changed.append("%s quotas %s" % (name, diff))
    quota("compute", nova + "/os-quota-sets/" + demo_project, "quota_set", COMPUTE_QUOTA)
    quota("network", neutron + "/quotas/" + demo_project, "quota", NETWORK_QUOTA)
    if WITH_CINDER:
        cinder = endpoint(admin, "volumev3")
        quota("volume", cinder + "/os-quota-sets/" + demo_project, "quota_set", VOLUME_QUOTA)

    # --- application credential of demo + clouds.yaml ------------------------------------------
    old = {}
    try:
        with open(CLOUDS_YAML) as f:
            old = (yaml.safe_load(f) or {}).get("clouds", {}).get("local-appcred", {}).get("auth", {})
    except FileNotFoundError:
        pass
    ac_id, ac_secret = old.get("application_credential_id"), old.get("application_credential_secret")
    url = KS + "/v3/users/%s/application_credentials" % demo_user
    existing = call(demo, "GET", url + "?name=" + APPCRED_NAME).json()["application_credentials"]
    valid = False
    if ac_id and ac_secret and any(a["id"] == ac_id for a in existing):
        try:
            kssession.Session(auth=v3.ApplicationCredential(
                auth_url=KS + "/v3", application_credential_id=ac_id,
                application_credential_secret=ac_secret)).get_token()
            valid = True
        except ksexc.Unauthorized:
            pass
    if not valid:
        for a in existing:
            call(demo, "DELETE", url + "/" + a["id"])
        ac = call(demo, "POST", url, json={"application_credential": {
            "name": APPCRED_NAME, "unrestricted": True,
            "description": "hack/openstack/up.sh"}}).json()["application_credential"]
        ac_id, ac_secret = ac["id"], ac["secret"]
        changed.append("application credential " + APPCRED_NAME)

    def pw_cloud(user, pw, project):
        return {"auth": {"auth_url": KS + "/v3", "username": user, "password": pw,
                         "project_name": project, "user_domain_name": "Default",
                         "project_domain_name": "Default"},
                "region_name": REGION, "interface": "public", "identity_api_version": 3}
    clouds = {"clouds": {
        "local": pw_cloud("admin", ADMINPW, "admin"),
        "local-demo": pw_cloud("demo", DEMOPW, "demo"),
        "local-appcred": {"auth_type": "v3applicationcredential",
                          "auth": {"auth_url": KS + "/v3", "application_credential_id": ac_id,
                                   "application_credential_secret": ac_secret},
                          "region_name": REGION, "interface": "public", "identity_api_version": 3},
    }}
    text = "# written by hack/openstack/up.sh\n" + yaml.safe_dump(clouds, sort_keys=False)
    try:
        with open(CLOUDS_YAML) as f:
            same = f.read() == text
    except FileNotFoundError:
        same = False
    if not same:
        os.makedirs(os.path.dirname(CLOUDS_YAML), exist_ok=True)
        tmp = CLOUDS_YAML + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, CLOUDS_YAML)
        changed.append(CLOUDS_YAML)

    # --- the fake hypervisor -------------------------------------------------------------------
    for i in range(90):
        hyps = call(admin, "GET", nova + "/os-hypervisors").json()["hypervisors"]
        if any(h.get("state") == "up" and h.get("status") == "enabled" for h in hyps):
            break
        if i % 5 == 0:
            subprocess.run(["nova-manage", "cell_v2", "discover_hosts"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)
    else:
        raise SystemExit("no hypervisor came up (see /var/log/ocp-capi-os/nova-compute.log)")
    log("hypervisors: " + ", ".join("%s (%s/%s)" % (h["hypervisor_hostname"], h["state"], h["status"])
                                    for h in hyps))
    log("changed: " + ("; ".join(changed) if changed else "nothing"))


if __name__ == "__main__":
    sys.exit(main())
