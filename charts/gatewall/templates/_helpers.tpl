{{/*
The prefix of every object's name. It ends in "gatewall": the admission
policies (files/dataplane_policy.yaml) apply to ServiceAccounts whose name
ends in gatewall-controller-manager, and a manager whose name does not would
run without them.
*/}}
{{- define "gatewall.fullname" -}}
{{- $release := .Release.Name -}}
{{- $name := .Values.fullnameOverride | default (ternary $release (printf "%s-gatewall" $release) (hasSuffix "gatewall" $release)) -}}
{{- if not (hasSuffix "gatewall" $name) -}}
{{- fail (printf "fullnameOverride %q must end in \"gatewall\": the admission policies recognise the manager by a ServiceAccount name ending in gatewall-controller-manager" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/* Labels that select this installation's manager pods. */}}
{{- define "gatewall.selectorLabels" -}}
app.kubernetes.io/component: controller
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/name: gatewall
{{- end -}}

{{/* Labels of every object the chart makes (config/default's and Helm's). */}}
{{- define "gatewall.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: gatewall
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The agent server's Secret. */}}
{{- define "gatewall.agentTLSSecret" -}}
{{- .Values.nginxGateway.agent.tlsSecretName | default (printf "%s-agent-tls" (include "gatewall.fullname" .)) -}}
{{- end -}}

{{/* The NginxProxy the GatewayClass names. */}}
{{- define "gatewall.proxyConfigName" -}}
{{- printf "%s-proxy-config" (include "gatewall.fullname" .) -}}
{{- end -}}

{{/* An image value's reference: repository:tag, or repository alone. */}}
{{- define "gatewall.image" -}}
{{- if .tag -}}{{ printf "%s:%s" .repository .tag }}{{- else -}}{{ .repository }}{{- end -}}
{{- end -}}

{{/* The rules of a Role or ClusterRole in one of files/ (copies of config/rbac that `make manifests` makes). */}}
{{- define "gatewall.rules" -}}
{{- $role := .Files.Get .file | fromYaml -}}
{{- if not $role.rules -}}
{{- fail (printf "%s has no rules: run make manifests" .file) -}}
{{- end -}}
{{- toYaml $role.rules -}}
{{- end -}}
