package endpointfeed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gatewall/gatewall/internal/endpoints"
)

// NGINX applies updates to NGINX's Lua (nginx/config/lua/gatewall/endpoints.lua)
// through its control socket, after writing the whole set to the state
// file a starting NGINX loads.
type NGINX struct {
	// Socket is the control socket's path (config.EndpointsSocket without
	// "unix:"); Path the control location (config.EndpointsPath).
	Socket, Path string
	// StateFile is config.EndpointsStateFile.
	StateFile string

	client *http.Client
	// dirty: the last update did not reach NGINX, whose endpoints are
	// older than the state file's; the next one is sent whole.
	dirty bool
}

// retryWait is the pause between attempts to reach NGINX: it is not
// listening on the socket before it runs a configuration Gatewall pushed,
// nor while it restarts.
const retryWait = 200 * time.Millisecond

// Apply writes set to the state file, then hands u (or, after a failure,
// the whole set) to NGINX, trying again until NGINX answers or ctx ends.
func (n *NGINX) Apply(ctx context.Context, u endpoints.Update, set endpoints.Set) error {
	whole := endpoints.Snapshot(set, u.Version)
	if err := n.writeState(whole); err != nil {
		return err
	}
	if n.client == nil {
		n.client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", n.Socket)
		}}, Timeout: 30 * time.Second}
	}
	for {
		send := u
		if n.dirty {
			send = whole
		}
		err := n.post(ctx, send)
		if err == nil {
			n.dirty = false
			return nil
		}
		if _, rejected := err.(rejection); rejected {
			return fmt.Errorf("%w: %v", ErrRejected, err)
		}
		n.dirty = true
		select {
		case <-ctx.Done():
			return fmt.Errorf("NGINX did not take the endpoints: %w", err)
		case <-time.After(retryWait):
		}
	}
}

// rejection is NGINX's refusal of an update (400), as opposed to not
// reaching it.
type rejection string

func (r rejection) Error() string { return string(r) }

func (n *NGINX) post(ctx context.Context, u endpoints.Update) error {
	body, err := json.Marshal(u)
	if err != nil {
		return rejection(err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://nginx"+n.Path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode == http.StatusOK:
		return nil
	case resp.StatusCode == http.StatusBadRequest:
		return rejection(fmt.Sprintf("NGINX refused the update: %s", bytes.TrimSpace(msg)))
	}
	return fmt.Errorf("NGINX answered %s: %s", resp.Status, bytes.TrimSpace(msg))
}

// writeState replaces the state file in one rename, so that NGINX never
// reads half of it.
func (n *NGINX) writeState(whole endpoints.Update) error {
	data, err := json.Marshal(whole)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(n.StateFile), ".endpoints-*")
	if err != nil {
		return fmt.Errorf("writing the endpoints state file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the endpoints state file: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), n.StateFile)
}
