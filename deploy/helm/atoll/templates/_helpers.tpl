{{/* Names and labels. */}}
{{- define "atoll.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "atoll.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The headless Service that gives each server pod its DNS name. */}}
{{- define "atoll.headless" -}}
{{- printf "%s-pods" (include "atoll.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "atoll.labels" -}}
{{ include "atoll.metaLabels" . }}
app.kubernetes.io/name: {{ include "atoll.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* atoll.labels without the ones selectors use. */}}
{{- define "atoll.metaLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The server pods. */}}
{{- define "atoll.selectorLabels" -}}
app.kubernetes.io/name: {{ include "atoll.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{/* The pods of one worker pool: (dict "root" $ "pool" $pool). */}}
{{- define "atoll.workerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "atoll.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: worker
atoll.dev/pool: {{ .pool.name }}
{{- end }}

{{- define "atoll.workerName" -}}
{{- printf "%s-worker-%s" (include "atoll.fullname" .root) .pool.name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "atoll.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "atoll.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* A pool's ServiceAccount: its own (serviceAccount.create), an existing one (serviceAccountName), else the namespace's default. */}}
{{- define "atoll.workerServiceAccountName" -}}
{{- $sa := .pool.serviceAccount | default dict }}
{{- if $sa.create }}
{{- default (include "atoll.workerName" .) $sa.name }}
{{- else }}
{{- default "default" .pool.serviceAccountName }}
{{- end }}
{{- end }}

{{- define "atoll.image" -}}
{{- $img := .image | default dict }}
{{- printf "%s:%s" (default .root.Values.image.repository $img.repository) (default (default .root.Chart.AppVersion .root.Values.image.tag) $img.tag) }}
{{- end }}

{{/* The port atoll listens on (its default --port). */}}
{{- define "atoll.port" -}}4141{{- end }}

{{/* Where the chart mounts things. */}}
{{- define "atoll.dataDir" -}}/data{{- end }}
{{- define "atoll.workDir" -}}/var/lib/atoll-work{{- end }}
{{- define "atoll.secretsDir" -}}/etc/atoll/secrets{{- end }}
{{- define "atoll.repoConfigPath" -}}/etc/atoll/repo-config/repos.yaml{{- end }}
{{- define "atoll.workerTokenFile" -}}/var/run/atoll/worker-token{{- end }}

{{/* The Service's URL, then each server pod's, for workers' --server. */}}
{{- define "atoll.serverURLs" -}}
{{- $ns := .Release.Namespace }}
{{- $domain := .Values.clusterDomain }}
{{- $urls := list (printf "http://%s.%s.svc.%s:%v" (include "atoll.fullname" .) $ns $domain .Values.service.port) }}
{{- range $i := until 2 }}
{{- $urls = append $urls (printf "http://%s-%d.%s.%s.svc.%s:%s" (include "atoll.fullname" $) $i (include "atoll.headless" $) $ns $domain (include "atoll.port" $)) }}
{{- end }}
{{- join "," $urls }}
{{- end }}

{{/*
Secrets: the key under .Values.secrets, then the flag it sets. Each is
mounted as a file and passed as ATOLL_<FLAG>_FILE, except the ones in
atoll.envSecrets, which have no -file flag and come from a secretKeyRef.
*/}}
{{- define "atoll.secretFlags" -}}
ghToken: gh-token
ghWebhookSecret: gh-webhook-secret
ghAppKey: gh-app-key
azuredevopsToken: azuredevops-token
azuredevopsWebhookPassword: azuredevops-webhook-password
azuredevopsClientSecret: azuredevops-client-secret
replicaAccessKeyId: replica-access-key-id
replicaSecretAccessKey: replica-secret-access-key
adminPassword: admin-password
apiSecret: api-secret
oidcClientSecret: oidc-client-secret
slackToken: slack-token
webhookHttpHeaders: webhook-http-headers
{{- end }}

{{- define "atoll.envSecrets" -}}
replicaAccessKeyId: true
{{- end }}

{{/* Keys of .Values.config the chart sets itself. */}}
{{- define "atoll.reservedConfig" -}}
data-dir: persistence
work-dir: workDir
node-id: the pod's name
advertise-url: the pod's DNS name through the headless Service
replica-url: replicaUrl
lease-ttl: leaseTtl
stop-timeout: stopTimeoutSeconds
repo-config: repoConfig
port: the chart (atoll listens on 4141)
addr: the chart (atoll listens on 4141)
{{- if .Values.kubernetes.enabled }}
kube-namespace: kubernetes.enabled (the release's namespace)
default-execution-pool: kubernetes.defaultPool
kube-schedule-timeout: kubernetes.scheduleTimeout
{{- end }}
{{- end }}

{{/* The Service's in-cluster URL: the Kubernetes Jobs' pods reach the active there. */}}
{{- define "atoll.serviceURL" -}}
{{- printf "http://%s.%s.svc.%s:%v" (include "atoll.fullname" .) .Release.Namespace .Values.clusterDomain .Values.service.port }}
{{- end }}

{{/* Whether the server runs jobs as Kubernetes Jobs: "true" or "". */}}
{{- define "atoll.kubePools" -}}
{{- if and .Values.kubernetes.enabled .Values.kubernetes.pools }}true{{ end }}
{{- end }}

{{/*
The server-side repo config (--repo-config): repoConfig as written (its
lines are the ones the server's messages name), then kubernetes.pools as
the top-level execution_pools key. Empty when there is neither.
*/}}
{{- define "atoll.repoConfig" -}}
{{- $user := .Values.repoConfig | default "" }}
{{- $cfg := dict }}
{{- if $user }}
{{- $cfg = fromYaml $user }}
{{- if hasKey $cfg "Error" }}
{{- fail (printf "repoConfig: not a YAML mapping: %s" (get $cfg "Error")) }}
{{- end }}
{{- end }}
{{- if include "atoll.kubePools" . }}
{{- if hasKey $cfg "execution_pools" }}
{{- fail "repoConfig sets execution_pools and so does kubernetes.pools: give the pools in one place (kubernetes.pools, or set kubernetes.pools to null and keep them in repoConfig)" }}
{{- end }}
{{- $pools := dict }}
{{- range $name, $template := .Values.kubernetes.pools }}
{{- if not (regexMatch "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$" $name) }}
{{- fail (printf "kubernetes.pools: name %q: a pool name is 1 to 63 lower-case letters, digits and - (a DNS label)" $name) }}
{{- end }}
{{- if eq $name "local" }}
{{- fail "kubernetes.pools: \"local\" is the active node's own pool" }}
{{- end }}
{{- range $.Values.workerPools }}
{{- if eq .name $name }}
{{- fail (printf "kubernetes.pools: %q is also in workerPools: a pool runs its jobs either as Kubernetes Jobs or on its workers, not both" $name) }}
{{- end }}
{{- end }}
{{- $template = $template | default dict }}
{{- if eq (toString $template.serviceAccountName) (include "atoll.serviceAccountName" $) }}
{{- fail (printf "kubernetes.pools[%s].serviceAccountName: %s is the server's ServiceAccount, which holds the Role that reads this namespace's Secrets (the job tokens): give the runs an account of their own" $name $template.serviceAccountName) }}
{{- end }}
{{- range $template.env }}
{{- if regexMatch (include "atoll.secretEnvPattern" $) (toString .name) }}
{{- fail (printf "kubernetes.pools[%s].env: %s looks secret: a pod template's env holds literal values, which the ConfigMap would show; put it in a Secret and name the Secret in envFromSecrets" $name .name) }}
{{- end }}
{{- end }}
{{- $_ := set $pools $name (dict "kubernetes" $template) }}
{{- end }}
{{- if $user }}
{{- $user = printf "%s\n" (trimSuffix "\n" $user) }}
{{- end }}
{{- printf "%s# kubernetes.pools of the Helm chart:\n%s" $user (toYaml (dict "execution_pools" $pools)) }}
{{- else }}
{{- $user }}
{{- end }}
{{- end }}

{{/* ATOLL_<FLAG> of a flag name. */}}
{{- define "atoll.envName" -}}
{{- printf "ATOLL_%s" (. | upper | replace "-" "_") }}
{{- end }}

{{/* An env var name that holds a secret: then only valueFrom, never value. */}}
{{- define "atoll.checkEnv" -}}
{{- range .env }}
{{- if and (hasKey . "value") (regexMatch (include "atoll.secretEnvPattern" $) .name) }}
{{- fail (printf "%s: %s has an inline value: a secret must come from a Secret (valueFrom.secretKeyRef or envFrom)" $.where .name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* Also in values.schema.json. */}}
{{- define "atoll.secretEnvPattern" -}}
TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|(^|_)KEY(_|$)
{{- end }}

{{/* A config value as the flag takes it: lists joined with commas, whole
numbers without an exponent (YAML numbers reach templates as float64). */}}
{{- define "atoll.configValue" -}}
{{- if kindIs "slice" . }}
{{- join "," . }}
{{- else if and (kindIs "float64" .) (eq (float64 (int64 .)) .) }}
{{- int64 . }}
{{- else }}
{{- toString . }}
{{- end }}
{{- end }}
