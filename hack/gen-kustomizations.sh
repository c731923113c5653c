#!/usr/bin/env bash
# Rewrites the resource lists of config/install/crds/kustomization.yaml and
# config/install/admission/kustomization.yaml: every other YAML file of the
# directory, sorted, so `kubectl apply -k config/install` applies every CRD
# and admission policy the hub's Go packages there embed.
# Run by `make manifests` (after hack/gen-crds.sh) and `make kustomizations`;
# config/install's test fails when a list is not the directory's files.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${repo_root}"
export LC_ALL=C # the order of the glob, so the lists do not depend on the locale

for dir in config/install/crds config/install/admission; do
	{
		echo "# Written by hack/gen-kustomizations.sh (make kustomizations): lists"
		echo "# every YAML file of this directory but this one."
		echo "apiVersion: kustomize.config.k8s.io/v1beta1"
		echo "kind: Kustomization"
		echo "resources:"
		for file in "${dir}"/*.yaml; do
			file="$(basename "${file}")"
			[[ "${file}" == kustomization.yaml ]] || echo "- ${file}"
		done
	} >"${dir}/kustomization.yaml.tmp"
	mv "${dir}/kustomization.yaml.tmp" "${dir}/kustomization.yaml"
done
echo "gen-kustomizations: listed the YAML files of config/install/crds and config/install/admission"
