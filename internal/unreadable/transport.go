package unreadable

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// stubbedGroups are the API groups whose objects the manager reads from
// CRDs: an API server checks their types only through the CRD's schema,
// which can be old or loosened. (Built-in kinds are checked by the API
// server's own code.)
var stubbedGroups = []string{"gateway.networking.k8s.io", "gateway.nginx.org", "appprotect.f5.com", "waf.f5.com"}

// stubTransport replaces, in the API server's answers (one object, a list,
// a watch; to a read, or to a status write, which returns the object) about
// stubbedGroups, every object that does not decode
// into its Go type by its stub (Stub) marked with the reason,
// and drops the mark from objects that do decode. Without it, one such
// object fails the decoding of its whole list or watch: the informer of
// its kind would stop at the last list that decoded, and no change to any
// object of the kind would reach Gatewall again.
type stubTransport struct {
	next   http.RoundTripper
	scheme *runtime.Scheme
	dec    runtime.Decoder
}

// StubConfig is a copy of cfg whose clients read the objects of
// stubbedGroups that do not decode into their Go types in s as marked stubs
// (stubTransport).
func StubConfig(cfg *rest.Config, s *runtime.Scheme) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(wrapStubs(s))
	return c
}

// wrapStubs returns rt wrapped by a stubTransport for objects of s.
func wrapStubs(s *runtime.Scheme) func(http.RoundTripper) http.RoundTripper {
	dec := serializer.NewCodecFactory(s).UniversalDeserializer()
	return func(rt http.RoundTripper) http.RoundTripper {
		return &stubTransport{next: rt, scheme: s, dec: dec}
	}
}

func (t *stubTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated) || !stubbedPath(req.URL.Path) {
		return resp, err
	}
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" {
		return resp, nil
	}
	if params["stream"] == "watch" || isWatch(req) {
		resp.Body = t.watchBody(resp.Body)
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
		return resp, nil
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	data = t.document(data)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Set("Content-Length", strconv.Itoa(len(data)))
	return resp, nil
}

func stubbedPath(path string) bool {
	for _, g := range stubbedGroups {
		if strings.HasPrefix(path, "/apis/"+g+"/") {
			return true
		}
	}
	return false
}

func isWatch(req *http.Request) bool {
	w := req.URL.Query().Get("watch")
	return w == "true" || w == "1"
}

// document checks one answer: a list (its items) or one object.
func (t *stubTransport) document(data []byte) []byte {
	var head struct {
		Kind       string            `json:"kind"`
		APIVersion string            `json:"apiVersion"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return data // not for us to judge: the client reports it
	}
	if !strings.HasSuffix(head.Kind, "List") || head.Items == nil {
		out, _ := t.object(data, "", "")
		return out
	}
	itemKind := strings.TrimSuffix(head.Kind, "List")
	changed := false
	for i, item := range head.Items {
		if out, ok := t.object(item, head.APIVersion, itemKind); ok {
			head.Items[i], changed = out, true
		}
	}
	if !changed {
		return data
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return data
	}
	items, err := json.Marshal(head.Items)
	if err != nil {
		return data
	}
	doc["items"] = items
	out, err := json.Marshal(doc)
	if err != nil {
		return data
	}
	return out
}

// object checks one object (apiVersion and kind default to a list's): it
// returns the object unchanged when it decodes and bears no mark, else the
// object without the mark, or its marked stub; changed says which.
func (t *stubTransport) object(data []byte, apiVersion, kind string) (out []byte, changed bool) {
	var defaults *schema.GroupVersionKind
	if gv, err := schema.ParseGroupVersion(apiVersion); err == nil && kind != "" {
		gvk := gv.WithKind(kind)
		defaults = &gvk
	}
	obj, gvk, err := t.dec.Decode(data, defaults, nil)
	if err != nil && (gvk == nil || !t.scheme.Recognizes(*gvk)) {
		return data, false // not a kind of ours: not for us to judge
	}
	if err == nil {
		m, aerr := meta.Accessor(obj)
		if aerr != nil {
			return data, false
		}
		if _, marked := m.GetAnnotations()[Annotation]; !marked {
			return data, false
		}
	}
	var u map[string]any
	if jerr := json.Unmarshal(data, &u); jerr != nil {
		return data, false // not JSON: the client reports it
	}
	if err != nil {
		u["apiVersion"], u["kind"] = gvk.GroupVersion().String(), gvk.Kind
		if out, ok := t.stub(u, err); ok {
			return out, true
		}
		return data, false // nothing to name it by: the client reports it
	}
	// A mark the object's author set: it is not ours to honour.
	md, _ := u["metadata"].(map[string]any)
	annotations, _ := md["annotations"].(map[string]any)
	delete(annotations, Annotation)
	out, _ = json.Marshal(u) // JSON values: cannot fail
	return out, true
}

// stub is the object's marked stub: its identity (Stub, with
// what the client needs to write its status: uid and resourceVersion) and
// its status. ok is false when not even its name decodes (the API server
// stores no such object).
func (t *stubTransport) stub(u map[string]any, decodeErr error) (out []byte, ok bool) {
	obj := Stub(t.dec, u, "uid", "resourceVersion")
	if obj == nil {
		return nil, false
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, false
	}
	m["apiVersion"], m["kind"] = u["apiVersion"], u["kind"]
	// The status Gatewall wrote stays, when it decodes: writers merge
	// their part of it (a route's parents) with the rest.
	if st, ok := u["status"]; ok {
		m["status"] = st
		if data, err := json.Marshal(m); err != nil {
			delete(m, "status")
		} else if _, _, err := t.dec.Decode(data, nil, nil); err != nil {
			delete(m, "status")
		}
	}
	meta, _ := m["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		m["metadata"] = meta
	}
	meta["annotations"] = map[string]any{Annotation: Reason(decodeErr)}
	out, _ = json.Marshal(m) // JSON values: cannot fail
	return out, true
}

// watchBody checks the object of every event of a watch stream.
func (t *stubTransport) watchBody(body io.ReadCloser) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		dec := json.NewDecoder(body)
		enc := json.NewEncoder(pw)
		for {
			var ev map[string]json.RawMessage
			if err := dec.Decode(&ev); err != nil {
				pw.CloseWithError(err)
				return
			}
			if obj, ok := ev["object"]; ok {
				if out, changed := t.object(obj, "", ""); changed {
					ev["object"] = out
				}
			}
			if err := enc.Encode(ev); err != nil {
				body.Close()
				return
			}
		}
	}()
	return &watchStream{PipeReader: pr, body: body}
}

// watchStream is a rewritten watch: closing it closes the API server's.
type watchStream struct {
	*io.PipeReader
	body io.Closer
}

func (w *watchStream) Close() error {
	w.PipeReader.Close()
	return w.body.Close()
}
