// Package instance creates and deletes one OpenStack instance (a Nova
// server with its ports, trunks and volumes) for code outside this module,
// such as a Machine API actuator. It runs the same code as the
// OpenStackServer controller, behind a plain-Go API: no Kubernetes types,
// no controller-runtime, no API server.
//
//	c, err := instance.New(ctx, instance.Cloud{CloudsYAML: yaml, CloudName: "openstack"})
//	res, err := c.Create(ctx, spec, prev) // until res.Done; requeue after res.RequeueAfter
//	del, err := c.Delete(ctx, spec, res)  // until del.Done
//
// Both entry points are idempotent and never wait: each call does what can
// be done now and says when to call again. Everything gets a deterministic
// name, and is looked up by that name (within the project) before it is
// created, so a lost Result or a crash between calls never duplicates or
// leaks anything:
//
//	server            <Name>
//	port i            <Name>-<i>, or <Name>-<NameSuffix>
//	trunk             the name of its parent port
//	root volume       <Name>-root
//	additional volume <Name>-<volume name>
//
// Names must therefore be unique within a project. Several resources with
// one name stop the call with ReasonAmbiguous rather than a guess. Calls for
// one Name must not run concurrently: two lookups may both miss and both
// create (the next call then reports ReasonAmbiguous).
package instance
