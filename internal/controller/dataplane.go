package controller

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/status"
)

// DataPlane receives each Gateway's NGINX files and reports what its data
// plane did with them. The agent server implements it; Programmed in every
// status comes from State, never from a default.
type DataPlane interface {
	// Publish hands a Gateway's files to its data plane and returns the
	// configuration's version; identical files give the same version.
	Publish(gw types.NamespacedName, files []config.File) (version string)
	// Forget drops the configuration of a Gateway that is gone.
	Forget(gw types.NamespacedName)
	// State reports what the data plane did with a version.
	State(gw types.NamespacedName, version string) status.DataPlane
}

// HeldFiles is the DataPlane of a manager that runs without data planes (no
// agent server): it holds each Gateway's files, ready to push, and reports
// every configuration as not yet applied.
type HeldFiles struct {
	mu    sync.Mutex
	files map[types.NamespacedName][]config.File
}

// NewHeldFiles returns an empty HeldFiles.
func NewHeldFiles() *HeldFiles {
	return &HeldFiles{files: map[types.NamespacedName][]config.File{}}
}

// Publish keeps the files.
func (h *HeldFiles) Publish(gw types.NamespacedName, files []config.File) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[gw] = files
	return config.Version(files)
}

// Forget drops the files.
func (h *HeldFiles) Forget(gw types.NamespacedName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.files, gw)
}

// State is always pending: nothing applies these files.
func (h *HeldFiles) State(types.NamespacedName, string) status.DataPlane {
	return status.DataPlane{State: status.Pending, Message: "no data plane is connected to Gatewall"}
}

// Files returns the files held for a Gateway.
func (h *HeldFiles) Files(gw types.NamespacedName) []config.File {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.files[gw]
}
