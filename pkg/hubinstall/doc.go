// Package hubinstall owns making a hub serve what federator needs: Karmada's
// CRDs (config/install/crds), created where missing and, where the hub
// already has its own (a Karmada hub's, which may carry more versions and a
// conversion webhook), added to where they lack fields or the status
// subresource federator's have; and the admission policies
// (config/install/admission), waited for until the hub enforces them
// (Install). Verify is for a hub whose CRDs are managed elsewhere (the
// manifests, --install-crds=false): it checks and changes nothing. Both
// report what the hub's CRDs lacked (InstallReport), so the controllers
// work with less and say so; pkg/hub calls them before it starts the
// controllers.
package hubinstall
