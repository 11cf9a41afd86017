package dataplane

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/datafile"
	"github.com/gatewall/gatewall/internal/endpoints"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/status"
)

// DataPlane receives each Gateway's NGINX files and reports what its data
// plane did with them. The agent server implements it; Programmed in every
// status comes from State, never from a default.
type DataPlane interface {
	// Publish hands a Gateway's files to its data plane and returns the
	// configuration's version, datafile.Version(files): identical files
	// give the same version, whoever computes it.
	Publish(gw types.NamespacedName, files []config.File) (version string)
	// PublishEndpoints hands a Gateway's endpoints to its data plane,
	// which takes them without a reload, how it resolves their DNS names
	// (r), and the remote key sets its JWT filters verify with (keys),
	// which it fetches. A reconcile hands them before the files, so that
	// a new upstream's endpoints are there when NGINX first uses it (and
	// a new key set is being fetched).
	PublishEndpoints(gw types.NamespacedName, set endpoints.Set, r endpoints.Resolver, keys endpoints.KeySources)
	// Forget drops the configuration of a Gateway that is gone.
	Forget(gw types.NamespacedName)
	// State reports what the data plane did with a version.
	State(gw types.NamespacedName, version string) status.DataPlane
}

// HeldFiles is the DataPlane of a manager that runs without data planes (no
// agent server): it holds each Gateway's files, ready to push, and reports
// every configuration as not yet applied.
type HeldFiles struct {
	mu        sync.Mutex
	files     map[types.NamespacedName][]config.File
	endpoints map[types.NamespacedName]endpoints.Set
}

// NewHeldFiles returns an empty HeldFiles.
func NewHeldFiles() *HeldFiles {
	return &HeldFiles{files: map[types.NamespacedName][]config.File{}, endpoints: map[types.NamespacedName]endpoints.Set{}}
}

// Publish keeps the files.
func (h *HeldFiles) Publish(gw types.NamespacedName, files []config.File) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[gw] = files
	return datafile.Version(files)
}

// PublishEndpoints keeps the endpoints.
func (h *HeldFiles) PublishEndpoints(gw types.NamespacedName, set endpoints.Set, _ endpoints.Resolver, _ endpoints.KeySources) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endpoints[gw] = set
}

// Forget drops the files and endpoints.
func (h *HeldFiles) Forget(gw types.NamespacedName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.files, gw)
	delete(h.endpoints, gw)
}

// State is always pending: nothing applies these files.
func (h *HeldFiles) State(types.NamespacedName, string) status.DataPlane {
	return status.DataPlane{State: status.Pending, Message: "no data plane is connected to Gatewall"}
}

// Endpoints returns the endpoints held for a Gateway.
func (h *HeldFiles) Endpoints(gw types.NamespacedName) endpoints.Set {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.endpoints[gw]
}

// Files returns the files held for a Gateway.
func (h *HeldFiles) Files(gw types.NamespacedName) []config.File {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.files[gw]
}
