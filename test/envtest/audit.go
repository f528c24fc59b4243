package envtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// auditPolicy records every request once, when its response is complete,
// without bodies.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
`

// AuditEvent is the part of an API server audit event (audit.k8s.io/v1
// Event) the tests read.
type AuditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time `json:"stageTimestamp"`
}

// IsWrite tells whether the request changes something.
func (e AuditEvent) IsWrite() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Resource is "resource" or "resource/subresource", "" for a
// non-resource URL.
func (e AuditEvent) Resource() string {
	if e.ObjectRef == nil {
		return ""
	}
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

// ReadAuditLog reads the audit events of the log at path completed in
// [from, to).
func ReadAuditLog(path string, from, to time.Time) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if !e.StageTimestamp.Before(from) && e.StageTimestamp.Before(to) {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// AuditTally sorts the requests of an audit window: the audited clients'
// writes (named with their object and user agent) and reads, and the
// other clients' writes.
type AuditTally struct {
	Writes, Reads, OthersWrites map[string]int
}

// TallyAudit sorts events; audited tells the clients under audit.
func TallyAudit(events []AuditEvent, audited func(AuditEvent) bool) AuditTally {
	t := AuditTally{Writes: map[string]int{}, Reads: map[string]int{}, OthersWrites: map[string]int{}}
	for _, e := range events {
		key := e.Verb + " " + e.Resource()
		switch {
		case audited(e) && e.IsWrite():
			name := ""
			if e.ObjectRef != nil {
				name = " " + e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
			}
			t.Writes[key+name+" by "+e.User.Username+" ("+e.UserAgent+")"]++
		case audited(e):
			t.Reads[key+" by "+e.UserAgent]++
		case e.IsWrite():
			t.OthersWrites[key]++
		}
	}
	return t
}

// QuietSince reports whether no audited client wrote in the log's last d.
func QuietSince(path string, d time.Duration, audited func(AuditEvent) bool) (bool, error) {
	now := time.Now()
	events, err := ReadAuditLog(path, now.Add(-d), now)
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if audited(e) && e.IsWrite() {
			return false, nil
		}
	}
	return true, nil
}
