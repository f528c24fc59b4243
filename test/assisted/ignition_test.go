package assisted

import "testing"

func TestIgnitionFile(t *testing.T) {
	cfg := []byte(`{"ignition":{"version":"3.1.0"},"storage":{"files":[
		{"path":"/a","contents":{"source":"data:text/plain;charset=utf-8;base64,WD0xCllfSUQ9YWJjCg=="}},
		{"path":"/b","contents":{"source":"data:,K%3Dv%20w"}},
		{"path":"/c","contents":{"source":"https://example.com/x"}}]}}`)
	if v, err := EnvFileValue(cfg, "/a", "Y_ID"); err != nil || v != "abc" {
		t.Errorf("base64 file: %q %v, want abc", v, err)
	}
	if got, ok, err := IgnitionFile(cfg, "/b"); err != nil || !ok || got != "K=v w" {
		t.Errorf("percent-encoded file: %q %v %v", got, ok, err)
	}
	if _, ok, err := IgnitionFile(cfg, "/missing"); ok || err != nil {
		t.Errorf("missing file: found=%v err=%v", ok, err)
	}
	if _, _, err := IgnitionFile(cfg, "/c"); err == nil {
		t.Error("a remote source is not a data URL: want an error")
	}
	if _, _, err := IgnitionFile([]byte("not json"), "/a"); err == nil {
		t.Error("not JSON: want an error")
	}
	// The discovery ignition the simulator serves round-trips its ID.
	if id := infraEnvIDFromIgnition(discoveryIgnition("id-1", "ns", "ie")); id != "id-1" {
		t.Errorf("InfraEnv ID %q, want id-1", id)
	}
}
