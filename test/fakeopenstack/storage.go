package fakeopenstack

import (
	"net/http"
	"slices"
)

// Glance: images.

func (c *Cloud) listImages(r *http.Request) (int, any, *apiError) {
	q := r.URL.Query()
	out := []object{}
	for _, o := range c.objs[Images] {
		if n := q.Get("name"); n != "" && o["name"] != n {
			continue
		}
		if !every(q["tag"], func(t string) bool { return slices.Contains(strs(o["tags"]), t) }) {
			continue
		}
		out = append(out, o)
	}
	return http.StatusOK, object{"images": out, "first": "/v2/images", "schema": "/v2/schemas/images"}, nil
}

func (c *Cloud) getImage(r *http.Request) (int, any, *apiError) {
	o := c.get(Images, r.PathValue("id"))
	if o == nil {
		return 0, nil, &apiError{http.StatusNotFound, object{"message": "No image found with ID " + r.PathValue("id"), "code": "404 Not Found"}}
	}
	return http.StatusOK, o, nil
}

// Cinder: volumes.

// readVolume applies what one more read of a volume shows: the end of
// its creation.
func (c *Cloud) readVolume(v object) {
	id := v["id"].(string)
	n, creating := c.creating[id]
	switch {
	case !creating:
	case n > 0:
		c.creating[id] = n - 1
	default:
		delete(c.creating, id)
		v["status"] = "available"
	}
}

func (c *Cloud) listVolumes(r *http.Request) (int, any, *apiError) {
	q := r.URL.Query()
	out := []object{}
	for _, v := range c.objs[Volumes] {
		if n := q.Get("name"); n != "" && v["name"] != n {
			continue
		}
		c.readVolume(v)
		if s := q.Get("status"); s != "" && v["status"] != s {
			continue
		}
		out = append(out, v)
	}
	return http.StatusOK, object{"volumes": out}, nil
}

func (c *Cloud) getVolume(r *http.Request) (int, any, *apiError) {
	v := c.get(Volumes, r.PathValue("id"))
	if v == nil {
		return 0, nil, notFound("Volume %s could not be found.", r.PathValue("id"))
	}
	c.readVolume(v)
	return http.StatusOK, object{"volume": v}, nil
}

func (c *Cloud) createVolume(r *http.Request) (int, any, *apiError) {
	var req struct{ Volume object }
	if err := decode(r, &req); err != nil {
		return 0, nil, err
	}
	in := req.Volume
	if over, _ := c.overQuota(QuotaVolumes, Volumes); over {
		return 0, nil, novaError(http.StatusRequestEntityTooLarge, "overLimit",
			"VolumeLimitExceeded: Maximum number of volumes allowed (%d) exceeded for quota 'volumes'.", c.quota[QuotaVolumes])
	}
	if num(in["size"]) <= 0 {
		return 0, nil, badRequest("Invalid input received: volume size must be a positive integer.")
	}
	az := str(in["availability_zone"])
	if az == "" {
		az = c.azs[0]
	} else if !slices.Contains(c.azs, az) {
		return 0, nil, badRequest("Invalid input received: Availability zone '%s' is invalid.", az)
	}
	v := object{"name": str(in["name"]), "description": str(in["description"]), "size": num(in["size"]), "status": "creating",
		"availability_zone": az, "volume_type": "__DEFAULT__", "bootable": "false", "attachments": []any{},
		"metadata": object{}, "os-vol-tenant-attr:tenant_id": ProjectID, "user_id": UserID}
	if t := str(in["volume_type"]); t != "" {
		v["volume_type"] = t
	}
	if img := str(in["imageRef"]); img != "" {
		if c.get(Images, img) == nil {
			return 0, nil, badRequest("Invalid image identifier or unable to access requested image.")
		}
		v["bootable"], v["volume_image_metadata"] = "true", object{"image_id": img}
	}
	id := c.add(Volumes, v)
	c.creating[id] = c.volumeReads
	return http.StatusAccepted, object{"volume": v}, nil
}

func (c *Cloud) deleteVolume(r *http.Request) (int, any, *apiError) {
	id := r.PathValue("id")
	v := c.get(Volumes, id)
	if v == nil {
		return 0, nil, notFound("Volume %s could not be found.", id)
	}
	if s := v["status"]; s != "available" && s != "error" {
		return 0, nil, badRequest("Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer, but current status is: %s.", s)
	}
	c.remove(Volumes, id)
	delete(c.creating, id)
	return http.StatusAccepted, nil, nil
}
