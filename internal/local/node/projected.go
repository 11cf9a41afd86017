package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// projectedFiles renders a projected volume: the union of its sources.
func (v *podVolumes) projectedFiles(ctx context.Context, pod *corev1.Pod, facts podFacts, volName string, p *corev1.ProjectedVolumeSource) (map[string]file, error) {
	def := mode(p.DefaultMode)
	payload := map[string]file{}
	for _, s := range p.Sources {
		var part map[string]file
		var err error
		switch {
		case s.ConfigMap != nil:
			part, err = v.configMapFiles(ctx, pod.Namespace, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, def)
		case s.Secret != nil:
			part, err = v.secretFiles(ctx, pod.Namespace, s.Secret.Name, s.Secret.Items, s.Secret.Optional, def)
		case s.DownwardAPI != nil:
			part = map[string]file{}
			err = downwardFiles(pod, facts, s.DownwardAPI.Items, def, part)
		case s.ServiceAccountToken != nil:
			part, err = v.tokenFile(ctx, pod, volName, s.ServiceAccountToken, def)
		default:
			err = errors.New("projected source type not supported by the local node")
		}
		if err != nil {
			return nil, err
		}
		for k, f := range part {
			payload[k] = f
		}
	}
	return payload, nil
}

// tokenFile returns the cached token, or requests a new one (bound to the
// pod, with the source's audience and lifetime) once 80% of the old one's
// lifetime has passed, as the kubelet does.
func (v *podVolumes) tokenFile(ctx context.Context, pod *corev1.Pod, volName string, src *corev1.ServiceAccountTokenProjection, def fs.FileMode) (map[string]file, error) {
	key := volName + "/" + src.Path
	cached, ok := v.tokens[key]
	if !ok || time.Now().After(cached.refreshAt) {
		seconds := int64(3600)
		if src.ExpirationSeconds != nil {
			seconds = *src.ExpirationSeconds
		}
		tok, expires, err := v.api.token(ctx, pod, src.Audience, seconds)
		if err != nil {
			if ok {
				// Keep serving the old token while it is valid; retry later.
				return map[string]file{src.Path: {data: []byte(cached.token), mode: def}}, nil
			}
			return nil, fmt.Errorf("requesting a service account token: %w", err)
		}
		now := time.Now()
		cached = cachedToken{token: tok, refreshAt: now.Add(expires.Sub(now) * 8 / 10)}
		if v.tokens == nil {
			v.tokens = map[string]cachedToken{}
		}
		v.tokens[key] = cached
	}
	return map[string]file{src.Path: {data: []byte(cached.token), mode: def}}, nil
}
