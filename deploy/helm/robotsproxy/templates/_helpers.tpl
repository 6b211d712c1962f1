{{/* The chart's name, and the release's full name (at most 63 characters). */}}
{{- define "robotsproxy.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "robotsproxy.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "robotsproxy.selectorLabels" -}}
app.kubernetes.io/name: {{ include "robotsproxy.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "robotsproxy.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "robotsproxy.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "robotsproxy.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "robotsproxy.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether the CA is configured: an existing Secret, or PEM text. */}}
{{- define "robotsproxy.caEnabled" -}}
{{- if or .Values.ca.existingSecret .Values.ca.cert .Values.ca.generate -}}true{{- end -}}
{{- end -}}

{{- define "robotsproxy.caSecretName" -}}
{{- .Values.ca.existingSecret | default (printf "%s-ca" (include "robotsproxy.fullname" .)) -}}
{{- end -}}

{{/*
config.yaml holds secrets: proxy users (users or config.identity.users,
bcrypt hashes), or a Redis URL with credentials.
*/}}
{{- define "robotsproxy.configInSecret" -}}
{{- $identity := .Values.config.identity | default dict -}}
{{- if or .Values.users (get $identity "users") (contains "@" .Values.shared.redisUrl) -}}true{{- end -}}
{{- end -}}

{{/*
The open-proxy check of the binary, made here (see SAFETY in values.yaml):
the chart must set allow_open_proxy for the admin listener, so it refuses
to render a proxy that nothing guards.
*/}}
{{- define "robotsproxy.checkGuarded" -}}
{{- $identity := .Values.config.identity | default dict -}}
{{- $pinned := or .Values.users (get $identity "users") (get $identity "client_ranges") -}}
{{- if not (or $pinned .Values.networkPolicy.enabled .Values.allowOpenProxy) -}}
{{- fail "robotsproxy: nothing guards the proxy port, so it would be an open proxy. Set users or config.identity.client_ranges (pinned identities), or networkPolicy.enabled=true (with a CNI that enforces NetworkPolicy), or allowOpenProxy=true if something else guards it. See SAFETY in values.yaml." -}}
{{- end -}}
{{- if and .Values.ca.cert (not .Values.ca.key) -}}
{{- fail "robotsproxy: ca.cert is set without ca.key" -}}
{{- end -}}
{{- end -}}

{{/* config.yaml: .Values.config with the keys the chart owns. */}}
{{- define "robotsproxy.config" -}}
{{- include "robotsproxy.checkGuarded" . -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- $_ := set $cfg "listen" (printf ":%d" (int .Values.ports.proxy)) -}}
{{- $_ := set $cfg "admin_listen" (printf ":%d" (int .Values.ports.admin)) -}}
{{- $_ := set $cfg "allow_open_proxy" true -}}
{{- $identity := deepCopy (get $cfg "identity" | default dict) -}}
{{- if .Values.users -}}
{{- $_ := set $identity "users" .Values.users -}}
{{- end -}}
{{- $_ := set $cfg "identity" $identity -}}
{{- if include "robotsproxy.caEnabled" . -}}
{{- $mitm := deepCopy (get $cfg "mitm" | default dict) -}}
{{- $_ := set $mitm "ca_cert" "/etc/robotsproxy/ca/tls.crt" -}}
{{- $_ := set $mitm "ca_key" "/etc/robotsproxy/ca/tls.key" -}}
{{- $_ := set $cfg "mitm" $mitm -}}
{{- else -}}
{{- /* No CA and ca.generate false: a CA of each pod's own could not be
     trusted fleet-wide, so the chart opts out explicitly (host-level)
     unless config.mitm.mode says otherwise. */ -}}
{{- $mitm := deepCopy (get $cfg "mitm" | default dict) -}}
{{- if not (hasKey $mitm "mode") -}}
{{- $_ := set $mitm "mode" "host-level" -}}
{{- end -}}
{{- $_ := set $cfg "mitm" $mitm -}}
{{- end -}}
{{- if .Values.shared.redisUrl -}}
{{- $shared := deepCopy (get $cfg "shared" | default dict) -}}
{{- $_ := set $shared "redis_url" .Values.shared.redisUrl -}}
{{- $_ := set $cfg "shared" $shared -}}
{{- end -}}
# Rendered by the robotsproxy Helm chart from its values; see config.yaml
# in the repository for every key. listen, admin_listen, allow_open_proxy,
# identity.users and mitm.ca_* are set by the chart.
{{ toYaml $cfg }}
{{- end -}}
