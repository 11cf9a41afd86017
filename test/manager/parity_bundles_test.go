package manager_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// prefixLocations returns v with every s3://<bucket>/<key> location in it
// moved to s3://<bucket>/<folder>/<key>.
func prefixLocations(v any, folder string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = prefixLocations(e, folder)
		}
	case []any:
		for i, e := range v {
			v[i] = prefixLocations(e, folder)
		}
	case string:
		if rest, ok := strings.CutPrefix(v, "s3://"); ok {
			if bucket, key, ok := strings.Cut(rest, "/"); ok {
				return "s3://" + bucket + "/" + folder + "/" + key
			}
		}
	}
	return v
}

// storeBundles puts, for every bundle reference in the objects' statuses
// (a location and a sha256: PLM's statuses, and the bundles a
// WAFGatewayBindingPolicy says are in force), the file <sha256>.tgz of the
// bundles directory at the location, as PLM would have stored it. A
// reference whose file the directory lacks is not stored: render and the
// manager both find it missing.
func storeBundles(t *testing.T, objs []*unstructured.Unstructured, dir string) {
	t.Helper()
	stored := 0
	for _, u := range objs {
		for _, ref := range bundleRefs(u.Object["status"]) {
			data, err := os.ReadFile(filepath.Join(dir, ref.sha256+".tgz"))
			if err != nil {
				continue
			}
			bucket, key, ok := strings.Cut(strings.TrimPrefix(ref.location, "s3://"), "/")
			if !ok || !strings.HasPrefix(ref.location, "s3://") {
				continue
			}
			if err := storage.PutObject(nil, bucket, key, data); err != nil {
				t.Fatal(err)
			}
			stored++
		}
	}
	if stored == 0 {
		t.Fatalf("no bundle of %s is referred to by a status: nothing to fetch", dir)
	}
}

type bundleRef struct{ location, sha256 string }

// bundleRefs are the {location, sha256} maps in a status.
func bundleRefs(v any) []bundleRef {
	var refs []bundleRef
	switch v := v.(type) {
	case map[string]any:
		loc, _ := v["location"].(string)
		sha, _ := v["sha256"].(string)
		if loc != "" && sha != "" {
			refs = append(refs, bundleRef{loc, sha})
		}
		for _, e := range v {
			refs = append(refs, bundleRefs(e)...)
		}
	case []any:
		for _, e := range v {
			refs = append(refs, bundleRefs(e)...)
		}
	}
	return refs
}
