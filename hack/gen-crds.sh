#!/usr/bin/env bash
# Generates the CRDs the hub serves for Karmada's API types, from Karmada's own
# Go types at the version the main module requires (go.mod), so the hub's
# schemas are exactly the ones a Karmada control plane validates against.
#
# Usage: hack/gen-crds.sh [controller-gen version]   (run by `make manifests`)
#
# Output, one file per CRD in config/install/crds/ (only these files are
# written; its kustomization.yaml is hack/gen-kustomizations.sh's, which
# `make manifests` runs next):
#   policy.karmada.io_propagationpolicies.yaml         policy/v1alpha1
#   policy.karmada.io_clusterpropagationpolicies.yaml  policy/v1alpha1
#   policy.karmada.io_overridepolicies.yaml            policy/v1alpha1
#   policy.karmada.io_clusteroverridepolicies.yaml     policy/v1alpha1
#   work.karmada.io_works.yaml                         work/v1alpha1
#   work.karmada.io_resourcebindings.yaml              work/v1alpha2 only
#   work.karmada.io_clusterresourcebindings.yaml       work/v1alpha2 only
#   cluster.karmada.io_clusters.yaml                   cluster/v1alpha1
#   config.karmada.io_resourceinterpretercustomizations.yaml         config/v1alpha1
#   config.karmada.io_resourceinterpreterwebhookconfigurations.yaml  config/v1alpha1
#     (no controller of federator's reads them; Karmada's karmada-agent
#     waits for them before it starts its controllers)
#   gating.federator.dev_gates.yaml                    federator's Gate (apis/gating)
#   gating.federator.dev_freezes.yaml                  federator's Freeze (apis/gating)
#   rollouts.federator.dev_rollouts.yaml               federator's Rollout (apis/rollouts)
#   rollouts.federator.dev_clusterrollouts.yaml        federator's ClusterRollout (apis/rollouts)
#
# The two policy CRDs then get what hack/crdpatch adds: the suspension
# proposal's field spellings as aliases, and a status with conditions.
#
# It also regenerates the deepcopy functions of federator's own API types.
#
# Bindings are generated from v1alpha2 alone: Karmada also serves v1alpha1
# bindings, converted by its webhook; the hub runs no conversion webhook, so
# serving two versions would silently lose fields.
#
# Clusters are served by Karmada's aggregated API server, not a CRD, but the
# type carries the kubebuilder markers (cluster scope, status subresource)
# that make controller-gen's output usable as one.
set -euo pipefail

CONTROLLER_GEN_VERSION="${1:-v0.19.0}"
KARMADA_APIS=github.com/karmada-io/karmada/pkg/apis

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out_dir="${repo_root}/config/install/crds"
tmp_dir="$(mktemp -d)"
trap 'rm -rf "${tmp_dir}"' EXIT

# controller-gen resolves the package paths with go/packages from the current
# directory, i.e. at the Karmada version pinned by the main module's go.mod.
cd "${repo_root}"

controller_gen() {
	go run "sigs.k8s.io/controller-tools/cmd/controller-gen@${CONTROLLER_GEN_VERSION}" "$@"
}

# Two runs, because controller-gen merges every version of a kind found in its
# paths into one CRD: work/v1alpha1 holds Work and the v1alpha1 bindings, and
# only its Work is kept.
controller_gen crd \
	paths="${KARMADA_APIS}/policy/v1alpha1" \
	paths="${KARMADA_APIS}/work/v1alpha1" \
	paths="${KARMADA_APIS}/cluster/v1alpha1" \
	paths="${KARMADA_APIS}/config/v1alpha1" \
	output:crd:dir="${tmp_dir}/v1alpha1"
controller_gen crd \
	paths="${KARMADA_APIS}/work/v1alpha2" \
	output:crd:dir="${tmp_dir}/v1alpha2"
controller_gen object paths="./apis/..."
controller_gen crd \
	paths="./apis/gating/..." \
	paths="./apis/rollouts/..." \
	output:crd:dir="${tmp_dir}/federator"

# file: the CRD file name; from: which run produced it; status: whether the
# Karmada type has a status the hub must serve as a subresource.
crds=(
	"policy.karmada.io_propagationpolicies.yaml        v1alpha1 no"
	"policy.karmada.io_clusterpropagationpolicies.yaml v1alpha1 no"
	"policy.karmada.io_overridepolicies.yaml           v1alpha1 no"
	"policy.karmada.io_clusteroverridepolicies.yaml    v1alpha1 no"
	"work.karmada.io_works.yaml                        v1alpha1 yes"
	"cluster.karmada.io_clusters.yaml                  v1alpha1 yes"
	"config.karmada.io_resourceinterpretercustomizations.yaml        v1alpha1 no"
	"config.karmada.io_resourceinterpreterwebhookconfigurations.yaml v1alpha1 no"
	"work.karmada.io_resourcebindings.yaml             v1alpha2 yes"
	"work.karmada.io_clusterresourcebindings.yaml      v1alpha2 yes"
	"gating.federator.dev_gates.yaml                   federator yes"
	"gating.federator.dev_freezes.yaml                 federator no"
	"rollouts.federator.dev_rollouts.yaml              federator yes"
	"rollouts.federator.dev_clusterrollouts.yaml       federator yes"
)

mkdir -p "${out_dir}"
for entry in "${crds[@]}"; do
	read -r file from status <<<"${entry}"
	src="${tmp_dir}/${from}/${file}"
	if [[ ! -f "${src}" ]]; then
		echo "gen-crds: controller-gen did not produce ${file} (from ${from})" >&2
		exit 1
	fi
	# Each generated file holds one version; a second one would mean the split
	# above no longer keeps v1alpha1 bindings out.
	versions="$(grep -c '^    served: ' "${src}" || true)"
	if [[ "${versions}" != 1 ]]; then
		echo "gen-crds: ${file} has ${versions} versions, want 1" >&2
		exit 1
	fi
	# Status subresource: the markers on Karmada's types provide it today. If
	# a Karmada upgrade drops a marker, add it back rather than serve a CRD
	# where status writes go through the main resource. The insertion replaces
	# an empty `subresources: {}`, joins an existing `subresources:`, or
	# appends after `storage: true`, the last key controller-gen writes otherwise.
	if [[ "${status}" == yes ]] && ! grep -q '^      status: {}$' "${src}"; then
		if grep -q '^    subresources: {}$' "${src}"; then
			sed -i 's/^    subresources: {}$/    subresources:\n      status: {}/' "${src}"
		elif grep -q '^    subresources:$' "${src}"; then
			sed -i 's/^    subresources:$/    subresources:\n      status: {}/' "${src}"
		else
			sed -i 's/^    storage: true$/    storage: true\n    subresources:\n      status: {}/' "${src}"
		fi
		grep -q '^      status: {}$' "${src}" || {
			echo "gen-crds: could not add the status subresource to ${file}" >&2
			exit 1
		}
	fi
	if [[ "${file}" == cluster.karmada.io_clusters.yaml ]]; then
		# Karmada's aggregated API prints these columns for `kubectl get
		# clusters`; a CRD needs them spelled out.
		printf '%s\n' '/^  - name: v1alpha1$/c\' \
			'  - additionalPrinterColumns:\' \
			'    - jsonPath: .status.kubernetesVersion\' \
			'      name: VERSION\' \
			'      type: string\' \
			'    - jsonPath: .spec.syncMode\' \
			'      name: MODE\' \
			'      type: string\' \
			'    - jsonPath: .status.conditions[?(@.type=="Ready")].status\' \
			'      name: READY\' \
			'      type: string\' \
			'    - jsonPath: .metadata.creationTimestamp\' \
			'      name: AGE\' \
			'      type: date\' \
			'    name: v1alpha1' >"${tmp_dir}/columns.sed"
		sed -i -f "${tmp_dir}/columns.sed" "${src}"
		grep -q 'name: READY' "${src}" || {
			echo "gen-crds: could not add printer columns to ${file}" >&2
			exit 1
		}
	fi
	cp "${src}" "${out_dir}/${file}"
done

# What the hub serves on policies beyond Karmada's types: the suspension
# proposal's spellings as aliases, and status.conditions (hack/crdpatch).
go run ./hack/crdpatch \
	"${out_dir}/policy.karmada.io_propagationpolicies.yaml" \
	"${out_dir}/policy.karmada.io_clusterpropagationpolicies.yaml"

echo "gen-crds: wrote ${#crds[@]} CRDs to ${out_dir#"${repo_root}"/} (controller-gen ${CONTROLLER_GEN_VERSION})"
