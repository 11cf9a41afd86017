package podseal

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The kinds of volume a data-plane template has beside its own (an
// NginxProxy's pod.volumes) are held as their sources' JSON. The API
// server defaults fields of some of them when it stores the template and
// the pods: these apply the same defaults to a copy first, so that the
// template and its pods project the same (test/envtest's
// TestPodSealSurvivesDefaulting tries host paths, the downward API,
// projections, claims and ephemeral volumes).

// normalizeSource applies the API server's defaults to a copy of s.
func normalizeSource(s corev1.VolumeSource) corev1.VolumeSource {
	s = *s.DeepCopy()
	if h := s.HostPath; h != nil && h.Type == nil {
		h.Type = ptr.To(corev1.HostPathUnset)
	}
	if d := s.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = ptr.To(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardItems(d.Items)
	}
	if e := s.Ephemeral; e != nil && e.VolumeClaimTemplate != nil && e.VolumeClaimTemplate.Spec.VolumeMode == nil {
		e.VolumeClaimTemplate.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	if i := s.ISCSI; i != nil && i.ISCSIInterface == "" {
		i.ISCSIInterface = "default"
	}
	if r := s.RBD; r != nil {
		r.RBDPool = orDefault(r.RBDPool, "rbd")
		r.RadosUser = orDefault(r.RadosUser, "admin")
		r.Keyring = orDefault(r.Keyring, "/etc/ceph/keyring")
	}
	if a := s.AzureDisk; a != nil {
		a.CachingMode = ptrOr(a.CachingMode, corev1.AzureDataDiskCachingReadWrite)
		a.Kind = ptrOr(a.Kind, corev1.AzureSharedBlobDisk)
		a.FSType = ptrOr(a.FSType, "ext4")
		a.ReadOnly = ptrOr(a.ReadOnly, false)
	}
	if c := s.ScaleIO; c != nil {
		c.StorageMode = orDefault(c.StorageMode, "ThinProvisioned")
		c.FSType = orDefault(c.FSType, "xfs")
	}
	return s
}

// normalizeProjection applies the API server's defaults to a copy of a
// projected volume's source.
func normalizeProjection(p corev1.VolumeProjection) corev1.VolumeProjection {
	p = *p.DeepCopy()
	if d := p.DownwardAPI; d != nil {
		defaultDownwardItems(d.Items)
	}
	return p
}

func defaultDownwardItems(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if f := items[i].FieldRef; f != nil && f.APIVersion == "" {
			f.APIVersion = "v1"
		}
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func ptrOr[T any](v *T, def T) *T {
	if v == nil {
		return &def
	}
	return v
}
