package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// podAPI is what volumes and env read from the API server.
type podAPI interface {
	sources
	// token requests a bound service account token for the pod.
	token(ctx context.Context, pod *corev1.Pod, audience string, seconds int64) (string, time.Time, error)
}

// volumeError is a volume that cannot be set up yet; the pod stays in
// ContainerCreating and the node retries, as a kubelet does.
type volumeError struct {
	volume string
	err    error
}

func (e *volumeError) Error() string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q: %v", e.volume, e.err)
}
func (e *volumeError) Unwrap() error { return e.err }

// podVolumes renders a pod's volumes into files under root.
type podVolumes struct {
	root   string
	api    podAPI
	tokens map[string]cachedToken // by volume/path
}

type cachedToken struct {
	token     string
	refreshAt time.Time
}

// render writes every volume and returns the host path of each by name.
// Rendering again refreshes content (ConfigMap and Secret changes, tokens
// near expiry) in place.
func (v *podVolumes) render(ctx context.Context, pod *corev1.Pod, facts podFacts) (map[string]string, error) {
	paths := map[string]string{}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		p, err := v.renderOne(ctx, pod, facts, vol)
		if err != nil {
			return nil, &volumeError{volume: vol.Name, err: err}
		}
		paths[vol.Name] = p
	}
	return paths, nil
}

func (v *podVolumes) renderOne(ctx context.Context, pod *corev1.Pod, facts podFacts, vol *corev1.Volume) (string, error) {
	dir := filepath.Join(v.root, vol.Name)
	src := vol.VolumeSource
	switch {
	case src.EmptyDir != nil:
		return dir, os.MkdirAll(dir, 0o777)
	case src.HostPath != nil:
		return hostPath(src.HostPath)
	case src.ConfigMap != nil:
		payload, err := v.configMapFiles(ctx, pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items,
			src.ConfigMap.Optional, mode(src.ConfigMap.DefaultMode))
		if err != nil {
			return "", err
		}
		return dir, writeAtomic(dir, payload)
	case src.Secret != nil:
		payload, err := v.secretFiles(ctx, pod.Namespace, src.Secret.SecretName, src.Secret.Items,
			src.Secret.Optional, mode(src.Secret.DefaultMode))
		if err != nil {
			return "", err
		}
		return dir, writeAtomic(dir, payload)
	case src.DownwardAPI != nil:
		payload := map[string]file{}
		if err := downwardFiles(pod, facts, src.DownwardAPI.Items, mode(src.DownwardAPI.DefaultMode), payload); err != nil {
			return "", err
		}
		return dir, writeAtomic(dir, payload)
	case src.Projected != nil:
		payload, err := v.projectedFiles(ctx, pod, facts, vol.Name, src.Projected)
		if err != nil {
			return "", err
		}
		return dir, writeAtomic(dir, payload)
	}
	return "", errors.New("volume type not supported by the local node")
}

// mode is a volume's defaultMode; 0644 when unset, as in the API defaults.
func mode(m *int32) fs.FileMode {
	if m == nil {
		return 0o644
	}
	return fs.FileMode(*m)
}

func itemMode(m *int32, def fs.FileMode) fs.FileMode {
	if m == nil {
		return def
	}
	return fs.FileMode(*m)
}

func hostPath(src *corev1.HostPathVolumeSource) (string, error) {
	t := corev1.HostPathUnset
	if src.Type != nil {
		t = *src.Type
	}
	switch t {
	case corev1.HostPathDirectoryOrCreate:
		return src.Path, os.MkdirAll(src.Path, 0o755)
	case corev1.HostPathFileOrCreate:
		f, err := os.OpenFile(src.Path, os.O_CREATE|os.O_RDONLY, 0o644)
		if err != nil {
			return "", err
		}
		return src.Path, f.Close()
	case corev1.HostPathUnset:
		return src.Path, nil
	}
	if _, err := os.Stat(src.Path); err != nil {
		return "", fmt.Errorf("hostPath %s: %w", src.Path, err)
	}
	return src.Path, nil
}

func (v *podVolumes) configMapFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, def fs.FileMode) (map[string]file, error) {
	payload := map[string]file{}
	cm, err := v.api.configMap(ctx, ns, name)
	if err != nil {
		if isOptional(optional) && isNotFound(err) {
			return payload, nil
		}
		return nil, fmt.Errorf("configmap %q: %w", name, err)
	}
	data := map[string][]byte{}
	for k, s := range cm.Data {
		data[k] = []byte(s)
	}
	for k, b := range cm.BinaryData {
		data[k] = b
	}
	return payload, project(data, items, optional, def, "configmap "+name, payload)
}

func (v *podVolumes) secretFiles(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, def fs.FileMode) (map[string]file, error) {
	payload := map[string]file{}
	s, err := v.api.secret(ctx, ns, name)
	if err != nil {
		if isOptional(optional) && isNotFound(err) {
			return payload, nil
		}
		return nil, fmt.Errorf("secret %q: %w", name, err)
	}
	return payload, project(s.Data, items, optional, def, "secret "+name, payload)
}

// project adds data to payload: every key, or only the listed items at their
// paths and modes.
func project(data map[string][]byte, items []corev1.KeyToPath, optional *bool, def fs.FileMode, what string, payload map[string]file) error {
	if len(items) == 0 {
		for _, k := range sortedKeys(data) {
			payload[k] = file{data: data[k], mode: def}
		}
		return nil
	}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			if isOptional(optional) {
				continue
			}
			return fmt.Errorf("%s has no key %q", what, it.Key)
		}
		payload[it.Path] = file{data: b, mode: itemMode(it.Mode, def)}
	}
	return nil
}

func downwardFiles(pod *corev1.Pod, facts podFacts, items []corev1.DownwardAPIVolumeFile, def fs.FileMode, payload map[string]file) error {
	for _, it := range items {
		var value string
		var err error
		switch {
		case it.FieldRef != nil:
			value, err = podField(pod, facts, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			c := findContainer(pod, it.ResourceFieldRef.ContainerName)
			if c == nil {
				return fmt.Errorf("downward API item %s: no container %q", it.Path, it.ResourceFieldRef.ContainerName)
			}
			value, err = resourceField(c, facts, it.ResourceFieldRef)
		}
		if err != nil {
			return fmt.Errorf("downward API item %s: %w", it.Path, err)
		}
		payload[it.Path] = file{data: []byte(value), mode: itemMode(it.Mode, def)}
	}
	return nil
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}
