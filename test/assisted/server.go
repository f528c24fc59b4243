package assisted

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
)

const (
	restPrefix      = "/api/assisted-install/v2"
	envFilePath     = "/etc/assisted/agent-installer.env"
	infraEnvIDEnv   = "INFRA_ENV_ID"
	dataURLBase64   = "data:text/plain;charset=utf-8;base64,"
	discoveryIgnKey = "discovery.ign"
)

func (s *Simulator) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+restPrefix+"/infra-envs/{id}/downloads/files", s.serveIgnition)
	mux.HandleFunc("GET "+restPrefix+"/events", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	})
	mux.HandleFunc("GET /images/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r, r.PathValue("id")) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte("simulated discovery ISO of infra env " + r.PathValue("id") + "\n"))
	})
	return mux
}

func (s *Simulator) authorized(r *http.Request, id string) bool {
	return r.URL.Query().Get("api_key") == s.apiKey(id)
}

// serveIgnition answers assisted-service's discovery ignition download.
func (s *Simulator) serveIgnition(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if r.URL.Query().Get("file_name") != discoveryIgnKey {
		http.Error(w, "unknown file", http.StatusBadRequest)
		return
	}
	if !s.authorized(r, id) {
		http.Error(w, `{"code":"401","reason":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	status := s.ignStatus
	key, known := s.infraEnvs[id]
	if status == 0 && known {
		s.fetches++
	}
	s.mu.Unlock()
	if status != 0 {
		http.Error(w, "simulated failure", status)
		return
	}
	if !known {
		http.Error(w, `{"code":"404","reason":"infra env not found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(discoveryIgnition(id, key.Namespace, key.Name))
}

// discoveryIgnition is the simulated discovery ignition: an Ignition 3.1
// config that, like the real one, carries the InfraEnv ID for the agent.
func discoveryIgnition(id, namespace, name string) []byte {
	env := infraEnvIDEnv + "=" + id + "\nINFRA_ENV_NAMESPACE=" + namespace + "\nINFRA_ENV_NAME=" + name + "\n"
	cfg := map[string]any{
		"ignition": map[string]any{"version": "3.1.0"},
		"storage": map[string]any{"files": []any{map[string]any{
			"path": envFilePath, "mode": 0o600, "overwrite": true,
			"contents": map[string]any{"source": dataURLBase64 + base64.StdEncoding.EncodeToString([]byte(env))},
		}}},
		"systemd": map[string]any{"units": []any{map[string]any{
			"name": "agent.service", "enabled": true,
			"contents": "[Unit]\nDescription=Discovery agent (assisted-service simulator)\n\n[Service]\nExecStart=/usr/local/bin/agent\n\n[Install]\nWantedBy=multi-user.target\n",
		}}},
	}
	out, _ := json.Marshal(cfg)
	return out
}

// infraEnvIDFromIgnition reads the InfraEnv ID out of a discovery
// ignition, or "".
func infraEnvIDFromIgnition(data []byte) string {
	id, _ := EnvFileValue(data, envFilePath, infraEnvIDEnv)
	return id
}
