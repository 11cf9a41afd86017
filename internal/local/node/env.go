package node

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// sources reads the ConfigMaps and Secrets pods refer to. A missing object
// is reported with an error satisfying apierrors.IsNotFound.
type sources interface {
	configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// orderedEnv keeps the order in which names were first defined, so that the
// environment is deterministic, while later definitions win.
type orderedEnv struct {
	names  []string
	values map[string]string
}

func (e *orderedEnv) set(name, value string) {
	if e.values == nil {
		e.values = map[string]string{}
	}
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *orderedEnv) list() []string {
	out := make([]string, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, n+"="+e.values[n])
	}
	return out
}

// containerEnv builds a container's environment the way the kubelet and a
// container runtime do: the image's env (with the node's PATH by default),
// HOSTNAME, then envFrom, then env, with $(VAR) references expanded.
func containerEnv(ctx context.Context, src sources, pod *corev1.Pod, c *corev1.Container, r Runner, facts podFacts) (*orderedEnv, error) {
	env := &orderedEnv{}
	env.set("PATH", os.Getenv("PATH"))
	for _, kv := range r.Env {
		k, v, _ := strings.Cut(kv, "=")
		env.set(k, v)
	}
	env.set("HOSTNAME", podHostname(pod))
	for _, from := range c.EnvFrom {
		if err := addEnvFrom(ctx, src, pod.Namespace, from, env); err != nil {
			return nil, err
		}
	}
	for _, v := range c.Env {
		if v.ValueFrom == nil {
			env.set(v.Name, expand(v.Value, env.values))
			continue
		}
		value, ok, err := envValueFrom(ctx, src, pod, c, facts, v.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", v.Name, err)
		}
		if ok {
			env.set(v.Name, value)
		}
	}
	return env, nil
}

func addEnvFrom(ctx context.Context, src sources, ns string, from corev1.EnvFromSource, env *orderedEnv) error {
	var data map[string]string
	switch {
	case from.ConfigMapRef != nil:
		cm, err := src.configMap(ctx, ns, from.ConfigMapRef.Name)
		if err != nil {
			if isOptional(from.ConfigMapRef.Optional) && isNotFound(err) {
				return nil
			}
			return fmt.Errorf("envFrom configmap %q: %w", from.ConfigMapRef.Name, err)
		}
		data = cm.Data
	case from.SecretRef != nil:
		s, err := src.secret(ctx, ns, from.SecretRef.Name)
		if err != nil {
			if isOptional(from.SecretRef.Optional) && isNotFound(err) {
				return nil
			}
			return fmt.Errorf("envFrom secret %q: %w", from.SecretRef.Name, err)
		}
		data = map[string]string{}
		for k, v := range s.Data {
			data[k] = string(v)
		}
	}
	for _, k := range sortedKeys(data) {
		env.set(from.Prefix+k, data[k])
	}
	return nil
}

// envValueFrom resolves valueFrom; ok is false for a missing optional key.
func envValueFrom(ctx context.Context, src sources, pod *corev1.Pod, c *corev1.Container, facts podFacts, from *corev1.EnvVarSource) (value string, ok bool, err error) {
	switch {
	case from.FieldRef != nil:
		v, err := podField(pod, facts, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		v, err := resourceField(c, facts, from.ResourceFieldRef)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := src.configMap(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if isOptional(ref.Optional) && isNotFound(err) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("configmap %q: %w", ref.Name, err)
		}
		if v, found := cm.Data[ref.Key]; found {
			return v, true, nil
		}
		if isOptional(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("couldn't find key %s in configmap %s/%s", ref.Key, pod.Namespace, ref.Name)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := src.secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			if isOptional(ref.Optional) && isNotFound(err) {
				return "", false, nil
			}
			return "", false, fmt.Errorf("secret %q: %w", ref.Name, err)
		}
		if v, found := s.Data[ref.Key]; found {
			return string(v), true, nil
		}
		if isOptional(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("couldn't find key %s in secret %s/%s", ref.Key, pod.Namespace, ref.Name)
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

func isOptional(b *bool) bool { return b != nil && *b }

// podHostname is the pod's hostname: spec.hostname, else its name.
func podHostname(pod *corev1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	return pod.Name
}
