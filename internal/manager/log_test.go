package manager

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNewLogger(t *testing.T) {
	tests := []struct {
		name      string
		format    string
		verbosity int
		wantJSON  bool
		wantLines []string // messages expected, in order
	}{
		{name: "text, v=0", format: "text", verbosity: 0, wantLines: []string{"info0", "failed"}},
		{name: "text, v=2", format: "text", verbosity: 2, wantLines: []string{"info0", "info1", "info2", "failed"}},
		{name: "json, v=0", format: "json", verbosity: 0, wantJSON: true, wantLines: []string{"info0", "failed"}},
		{name: "json, v=1", format: "json", verbosity: 1, wantJSON: true, wantLines: []string{"info0", "info1", "failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := newLogger(tt.format, tt.verbosity, &buf)
			if err != nil {
				t.Fatal(err)
			}
			log = log.WithName("setup")
			log.Info("info0", "key", "value")
			log.V(1).Info("info1")
			log.V(2).Info("info2")
			log.V(3).Info("info3")
			log.Error(errors.New("boom"), "failed")

			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) != len(tt.wantLines) {
				t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(tt.wantLines), buf.String())
			}
			for i, line := range lines {
				var entry map[string]any
				isJSON := json.Unmarshal([]byte(line), &entry) == nil
				if isJSON != tt.wantJSON {
					t.Fatalf("line %q: JSON=%v, want %v", line, isJSON, tt.wantJSON)
				}
				if !strings.Contains(line, tt.wantLines[i]) || !strings.Contains(line, "setup") {
					t.Errorf("line %d %q lacks %q or the logger name", i, line, tt.wantLines[i])
				}
				if !tt.wantJSON {
					continue
				}
				if entry["msg"] != tt.wantLines[i] {
					t.Errorf("msg = %v, want %s", entry["msg"], tt.wantLines[i])
				}
				wantLevel := "info"
				if tt.wantLines[i] == "failed" {
					wantLevel = "error"
				}
				if entry["level"] != wantLevel {
					t.Errorf("%s: level = %v, want %s", tt.wantLines[i], entry["level"], wantLevel)
				}
			}
			if tt.wantJSON {
				var first map[string]any
				_ = json.Unmarshal([]byte(lines[0]), &first)
				if first["key"] != "value" || first["v"] != float64(0) || first["logger"] != "setup" {
					t.Errorf("first entry %v lacks key=value, v=0 or logger=setup", first)
				}
			}
		})
	}
}

func TestNewLoggerRejects(t *testing.T) {
	for _, tt := range []struct {
		format    string
		verbosity int
		wantFlag  string
	}{
		{"xml", 0, "--log-format"},
		{"", 0, "--log-format"},
		{"text", -1, "-v"},
		{"json", 128, "-v"},
	} {
		_, err := newLogger(tt.format, tt.verbosity, &bytes.Buffer{})
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.wantFlag) {
			t.Errorf("newLogger(%q, %d) = %v, want a *UsageError naming %s", tt.format, tt.verbosity, err, tt.wantFlag)
		}
	}
}
