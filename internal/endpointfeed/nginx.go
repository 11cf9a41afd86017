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
	// KeySetsPath is the control location of remote JWT key sets
	// (config.KeySetsPath), KeySetsStateFile where they are kept for a
	// starting NGINX (config.KeySetsStateFile).
	KeySetsPath, KeySetsStateFile string

	client *http.Client
	// dirty: the last update did not reach NGINX, whose endpoints are
	// older than the state file's; the next one is sent whole.
	dirty bool
}

// retryWait is the pause between attempts to reach NGINX: it is not
// listening on the socket before it runs a configuration Gatewall pushed,
// nor while it restarts.
const retryWait = 200 * time.Millisecond

// Apply writes set to the state file, then hands u (or, after a failure to
// reach NGINX, the whole set) to NGINX, trying again until NGINX answers or
// ctx ends. It returns the upstreams NGINX refused alone (they keep the
// endpoints they had); an answer refusing the update whole is ErrRejected,
// and is never tried again: NGINX would answer the same.
func (n *NGINX) Apply(ctx context.Context, u endpoints.Update, set endpoints.Set) (map[string]string, error) {
	whole := endpoints.Snapshot(set, u.Version)
	if err := n.writeState(whole.ForNGINX()); err != nil {
		return nil, err
	}
	n.ensureClient()
	for {
		send := u
		if n.dirty {
			send = whole
		}
		refused, err := n.post(ctx, send.ForNGINX())
		if err == nil {
			n.dirty = false
			return refused, nil
		}
		if r, rejected := err.(rejection); rejected {
			// What NGINX holds is what it had, unless its Lua failed
			// midway (r.partial): then the next update goes whole.
			n.dirty = r.partial
			return nil, fmt.Errorf("%w: %v", ErrRejected, r.msg)
		}
		n.dirty = true
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("NGINX did not take the endpoints: %w", err)
		case <-time.After(retryWait):
		}
	}
}

// ApplyKeySets writes the key sets to their state file, then hands them
// to NGINX, trying again until it answers or ctx ends. It returns the
// sets NGINX refused alone (they keep what they had); an answer refusing
// them whole is ErrRejected.
func (n *NGINX) ApplyKeySets(ctx context.Context, sets map[string][]byte) (map[string]string, error) {
	doc := keySetsUpdate{Sets: map[string]string{}}
	for id, s := range sets {
		doc.Sets[id] = string(s)
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	// The sets may hold HMAC secrets: the file is NGINX's and this
	// client's alone.
	if err := writeFile(n.KeySetsStateFile, body, 0o600); err != nil {
		return nil, fmt.Errorf("writing the key sets state file: %w", err)
	}
	n.ensureClient()
	for {
		refused, err := n.postTo(ctx, n.KeySetsPath, body)
		if err == nil {
			return refused, nil
		}
		if r, rejected := err.(rejection); rejected {
			return nil, fmt.Errorf("%w: %v", ErrRejected, r.msg)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("NGINX did not take the key sets: %w", err)
		case <-time.After(retryWait):
		}
	}
}

// keySetsUpdate is what NGINX's gatewall/keysets.lua takes: every set, by
// source ID, as the JSON of a jwks.Set.
type keySetsUpdate struct {
	Sets map[string]string `json:"sets"`
}

// rejection is NGINX's refusal of an update, as opposed to not reaching
// it; partial when NGINX may have applied some of it.
type rejection struct {
	msg     string
	partial bool
}

func (r rejection) Error() string { return r.msg }

// answer is NGINX's answer to an update it applied.
type answer struct {
	Refused map[string]string `json:"refused"`
}

// ensureClient makes the client of the control socket, once.
func (n *NGINX) ensureClient() {
	if n.client == nil {
		n.client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", n.Socket)
		}}, Timeout: 30 * time.Second}
	}
}

func (n *NGINX) post(ctx context.Context, u endpoints.Update) (map[string]string, error) {
	body, err := json.Marshal(u)
	if err != nil {
		return nil, rejection{msg: err.Error()}
	}
	if len(body) > endpoints.MaxUpdateBytes {
		return nil, rejection{msg: fmt.Sprintf("the update is %d bytes, over the %d NGINX takes", len(body), endpoints.MaxUpdateBytes)}
	}
	return n.postTo(ctx, n.Path, body)
}

// postTo posts body to a control location and reads NGINX's answer.
func (n *NGINX) postTo(ctx context.Context, path string, body []byte) (map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://nginx"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// The answer names at most every upstream of an update.
	msg, err := io.ReadAll(io.LimitReader(resp.Body, int64(endpoints.MaxUpdateBytes)))
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		var a answer
		if err := json.Unmarshal(msg, &a); err != nil {
			return nil, rejection{msg: fmt.Sprintf("NGINX's answer is not understood: %v", err), partial: true}
		}
		return a.Refused, nil
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return nil, rejection{msg: fmt.Sprintf("NGINX refused the update (%s): %s", resp.Status, cut(msg))}
	case http.StatusInternalServerError:
		return nil, rejection{msg: fmt.Sprintf("NGINX failed applying the update (%s): %s", resp.Status, cut(msg)), partial: true}
	}
	return nil, fmt.Errorf("NGINX answered %s: %s", resp.Status, cut(msg))
}

// cut shortens an answer for a message.
func cut(msg []byte) []byte {
	msg = bytes.TrimSpace(msg)
	if len(msg) > 1024 {
		msg = append(msg[:1024:1024], "..."...)
	}
	return msg
}

// writeState replaces the state file in one rename, so that NGINX never
// reads half of it.
func (n *NGINX) writeState(whole endpoints.Update) error {
	data, err := json.Marshal(whole)
	if err != nil {
		return err
	}
	if err := writeFile(n.StateFile, data, 0o644); err != nil {
		return fmt.Errorf("writing the endpoints state file: %w", err)
	}
	return nil
}

// writeFile replaces a file in one rename.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
