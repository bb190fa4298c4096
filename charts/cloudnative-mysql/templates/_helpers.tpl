{{/* The labels Helm's objects carry besides their own. */}}
{{- define "cnm.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The operator's Pods: the Deployment's selector, the Service's. */}}
{{- define "cnm.selectorLabels" -}}
app.kubernetes.io/name: cloudnative-mysql
app.kubernetes.io/component: operator
{{- end }}

{{- define "cnm.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* The port of a bind address such as ":8080" or "0.0.0.0:8080". */}}
{{- define "cnm.port" -}}
{{- splitList ":" . | last -}}
{{- end }}

{{- define "cnm.metricsEnabled" -}}
{{- if ne (toString .Values.operator.metricsBindAddress) "0" }}true{{ end -}}
{{- end }}

{{/* Checks the values that depend on each other. */}}
{{- define "cnm.validate" -}}
{{- if and .Values.namespaceScoped (empty .Values.watchNamespaces) -}}
{{- fail "namespaceScoped needs watchNamespaces: the namespaces the operator is bound in" -}}
{{- end -}}
{{- end }}

{{/*
cnm.object writes one object of the chart's generated files (hack/installgen): in the release's
namespace instead of cloudnative-mysql-system, with Helm's labels, in namespace (when given).
Argument: (list $ text namespace).
*/}}
{{- define "cnm.object" -}}
{{- $root := index . 0 -}}
{{- $obj := index . 1 | replace "cloudnative-mysql-system" $root.Release.Namespace | fromYaml -}}
{{- if hasKey $obj "Error" -}}
{{- fail (printf "a generated file of the chart is not YAML: %s" $obj.Error) -}}
{{- end -}}
{{- if $obj -}}
{{- $meta := $obj.metadata -}}
{{- $_ := set $meta "labels" (merge (dict) ($meta.labels | default dict) (include "cnm.labels" $root | fromYaml) (index . 3)) -}}
{{- if index . 2 -}}
{{- $_ := set $meta "namespace" (index . 2) -}}
{{- end }}
---
{{ toYaml $obj }}
{{- end -}}
{{- end }}

{{/* cnm.files writes every object of the chart's files matching a glob. Argument: (list $ glob). */}}
{{- define "cnm.files" -}}
{{- $root := index . 0 -}}
{{- range $path, $_ := $root.Files.Glob (index . 1) }}
{{- include "cnm.object" (list $root ($root.Files.Get $path) "" dict) }}
{{- end }}
{{- end }}
