// Package keys is the one table of federator's annotations and labels, and
// of the few others' keys it treats specially: for each key, the objects
// that carry it, who sets it, whether member clusters receive it, whether a
// change of it on a template starts a new Rollout revision, and whether it
// holds a member's copy or delays its deletion. Every package that must
// tell such keys apart asks this table (ToMembers, NewRevision,
// DecidesHolds) instead of keeping a list of its own, and
// docs/architecture.md's table of keys is generated from it (Markdown; a
// test fails when the page is stale). The key strings themselves stay with
// the API they belong to (apis/policy, apis/work, apis/gating/v1alpha1,
// apis/rollouts/v1alpha1).
package keys

import (
	"strings"

	gatingv1alpha1 "github.com/federator-dev/federator/apis/gating/v1alpha1"
	policykeys "github.com/federator-dev/federator/apis/policy"
	rolloutsv1alpha1 "github.com/federator-dev/federator/apis/rollouts/v1alpha1"
	workkeys "github.com/federator-dev/federator/apis/work"
)

// Objects are the kinds of object a key is found on.
type Objects uint16

const (
	// Template is a resource template on the hub (any kind a policy places).
	Template Objects = 1 << iota
	// Policy is a PropagationPolicy or ClusterPropagationPolicy.
	Policy
	// Cluster is a member's Cluster object on the hub.
	Cluster
	// Binding is a ResourceBinding or ClusterResourceBinding.
	Binding
	// Work is a Work in a member's execution namespace.
	Work
	// Member is an object federator writes into a member cluster.
	Member
	// Gate is a Gate.
	Gate
	// Rollout is a Rollout or ClusterRollout.
	Rollout
	// Revision is a ControllerRevision that keeps a Rollout's revision.
	Revision
	// Tombstone is a ConfigMap recording a deletion countdown.
	Tombstone
	// Namespace is a hub namespace.
	Namespace
)

var objectNames = []string{"template", "policy", "Cluster", "binding", "Work", "member object", "Gate", "Rollout",
	"ControllerRevision", "tombstone", "hub namespace"}

// Effect is what a key does to what members store.
type Effect int

const (
	// Informs: the key records or identifies something; no decision of
	// whether or when a member stores a version reads it.
	Informs Effect = iota
	// Holds: it holds a member's copy back, or releases it (pkg/hold's
	// checks, or what they read: a Gate's requests, a Rollout's stamps).
	Holds
	// Delays: it delays the deletion of a member's copy, or ends the
	// delay (the countdowns).
	Delays
	// Says: it says, for readers, what holds a Work or a namespace, or
	// what a Work carries; the writer decided it elsewhere.
	Says
)

var effectNames = map[Effect]string{Informs: "no", Holds: "holds", Delays: "delays deletion", Says: "says what holds"}

// Key is one row of the table.
type Key struct {
	// Name is the key; for a family of keys, the prefix they share
	// (Prefix set), followed by what varies ("<cluster>").
	Name string
	// Prefix: Name is a prefix, and Suffix names what follows it.
	Prefix bool
	Suffix string
	// Label: a label; else an annotation.
	Label bool
	// On is the objects that carry it.
	On Objects
	// SetBy says who writes it.
	SetBy string
	// ToMembers: on a template, members receive it in their copy;
	// otherwise the hub keeps it (it is the hub's business, and changing
	// it rewrites no member object). For a key federator writes on member
	// objects, true.
	ToMembers bool
	// NewRevision: on a template, a change of it is a change of content:
	// a Rollout takes it in as a new revision and releases it stage by
	// stage. A key that is no revision reaches every released cluster at
	// once (when members receive it) or none (when they do not).
	NewRevision bool
	// Effect is what it does to what members store.
	Effect Effect
	// Admission names the ValidatingAdmissionPolicy (config/install/admission)
	// that checks its value on every write, if one does.
	Admission string
	// Meaning says in one line what it means.
	Meaning string
}

// Matches says whether key is this row's key (or one of its family; the
// bare prefix is one too, naming an empty cluster, which pkg/hold counts
// as unknown and so holds every cluster).
func (k Key) Matches(key string) bool {
	if k.Prefix {
		return strings.HasPrefix(key, k.Name)
	}
	return key == k.Name
}

// Table is every key federator reads or writes with a rule of its own, in
// the order docs/architecture.md lists them.
var Table = []Key{
	// What you write on templates, policies and Clusters.
	{Name: policykeys.SuspendedAnnotation, On: Template | Policy, SetBy: "you, `federator suspend`",
		Effect: Holds, Admission: "federator-suspension-annotations",
		Meaning: "suspends dispatching to every cluster; the value is the reason"},
	{Name: policykeys.ClusterSuspendedAnnotationPrefix, Prefix: true, Suffix: "<cluster>", On: Template | Policy,
		SetBy: "you, `federator suspend --clusters`", Effect: Holds, Admission: "federator-suspension-annotations",
		Meaning: "suspends dispatching to that cluster; the value is the reason"},
	{Name: gatingv1alpha1.GatesAnnotation, On: Template | Policy | Cluster, SetBy: "you",
		Effect: Holds, Meaning: "the Gates a cluster's copy waits for, comma-separated"},
	{Name: policykeys.DeletionDelayAnnotation, On: Template | Policy | Member, SetBy: "you; the binding controller writes the value in force on member copies",
		ToMembers: true, Effect: Delays,
		Meaning: "how long a member's copy counts down before it is deleted (a Go duration); a policy's is the default"},
	{Name: "kubectl.kubernetes.io/last-applied-configuration", On: Template, SetBy: "kubectl apply",
		ToMembers: true, Meaning: "kubectl's copy of what it applied: it changes with the content, already counted"},

	// What the controllers write on bindings and Works.
	{Name: rolloutsv1alpha1.RevisionAnnotation, On: Binding, SetBy: "the rollout controller", Effect: Holds,
		Meaning: "the Rollout revision that took in the template's content (RolloutStage hold)"},
	{Name: workkeys.PolicyHoldsAnnotation, On: Binding, SetBy: "the detector", Effect: Holds,
		Meaning: "what held in a deleted policy, kept until a policy claims the template again"},
	{Name: workkeys.TemplateHoldsAnnotation, On: Binding, SetBy: "the detector", Effect: Says,
		Meaning: "a digest of the template's keys that hold or delay: a change is taken before bulk work"},
	{Name: workkeys.HoldReasonAnnotation, On: Work, SetBy: "the binding controller", Effect: Says,
		Meaning: "what holds the Work: its Dispatching reason"},
	{Name: workkeys.HoldMessageAnnotation, On: Work, SetBy: "the binding controller", Effect: Says,
		Meaning: "which holder holds the Work and what releases it, for a person"},
	{Name: workkeys.HoldGatesAnnotation, On: Work, SetBy: "the binding controller", Effect: Says,
		Meaning: "the Gates that hold the Work"},
	{Name: workkeys.TemplateHashAnnotation, On: Work, SetBy: "the binding controller",
		Meaning: "the content hash of the template the manifest was built from (Rollouts)"},
	{Name: workkeys.RolledBackAnnotation, On: Work, SetBy: "the binding controller", Effect: Says,
		Meaning: "the manifest is an earlier revision on purpose: the Rollout put the cluster back"},
	{Name: workkeys.TemplateVersionAnnotation, On: Work, SetBy: "the binding controller",
		Meaning: "the template resourceVersion the manifest was built from: a floor for stale caches"},
	{Name: workkeys.OverrideFailedAnnotation, On: Work, SetBy: "the binding controller", Effect: Says,
		Meaning: "the override rule that cannot be applied; the Work keeps its last good manifest"},
	{Name: workkeys.BindingGenerationAnnotation, On: Work, SetBy: "the binding controller",
		Meaning: "the binding generation the Work was written from: an older writer writes nothing"},
	{Name: workkeys.MemberRunsAnnotation, On: Work, SetBy: "the binding controller",
		Meaning: "what the member runs while the Work carries something it has not taken"},
	{Name: workkeys.ChangedAtAnnotation, On: Work, SetBy: "the binding controller",
		Meaning: "when the manifest last changed: where dispatch latency starts"},
	{Name: workkeys.NamespaceKeptAnnotation, On: Work, SetBy: "the namespace controller", Effect: Says,
		Meaning: "why a member's namespace is kept although the hub's is gone"},
	{Name: workkeys.NamespaceWorkLabel, Label: true, On: Work, SetBy: "the namespace controller",
		Meaning: "the hub namespace a namespace Work is for"},

	// What the dispatcher and the countdowns write.
	{Name: workkeys.AppliedHashAnnotation, On: Member, SetBy: "the dispatcher", ToMembers: true,
		Meaning: "a hash of the manifest last applied: an unchanged object is not written again"},
	{Name: workkeys.DeletionTimestampAnnotation, On: Member | Work, SetBy: "the dispatcher, the countdowns", ToMembers: true,
		Effect: Delays, Meaning: "when the member copy's deletion countdown started; removed when it is placed again"},
	{Name: workkeys.TombstoneLabel, Label: true, On: Tombstone, SetBy: "the dispatcher, the countdowns", Effect: Delays,
		Meaning: "marks the record of a running countdown: it outlives the template, binding and Work"},
	{Name: workkeys.DeleteNowAnnotation, On: Tombstone, SetBy: "`federator delete --now`", Effect: Delays,
		Meaning: "ends the countdown now"},
	{Name: workkeys.NamespaceSkipLabel, Label: true, On: Namespace, SetBy: "you (Karmada's label)",
		Meaning: "keeps a hub namespace from being propagated"},

	// Gates and Rollouts.
	{Name: gatingv1alpha1.OpenRequestAnnotation, On: Gate, SetBy: "`federator gate open`, the gate webhook", Effect: Holds,
		Admission: "federator-gate-requests",
		Meaning:   "asks the Gate to open (the hub's time of the request)"},
	{Name: gatingv1alpha1.CloseRequestAnnotation, On: Gate, SetBy: "`federator gate close`, the gate webhook", Effect: Holds,
		Admission: "federator-gate-requests",
		Meaning:   "asks the Gate to close (the hub's time of the request)"},
	{Name: rolloutsv1alpha1.PromoteAnnotation, On: Rollout, SetBy: "`federator rollout promote`", Effect: Holds,
		Meaning: "lets a paused stage of a revision start"},
	{Name: rolloutsv1alpha1.AbortAnnotation, On: Rollout, SetBy: "`federator rollout abort`", Effect: Holds,
		Meaning: "stops a revision; its clusters go back to the last revision healthy there"},
	{Name: rolloutsv1alpha1.RolloutUIDLabel, Label: true, On: Revision, SetBy: "the rollout controller",
		Meaning: "the Rollout whose revision the ControllerRevision keeps"},
	{Name: rolloutsv1alpha1.GroupVersion.Group + "/", Prefix: true, Suffix: "<any other>", On: Template | Rollout | Binding,
		SetBy: "federator", Meaning: "the rollouts group's keys: the hub's, never a member's"},
}

// Lookup finds key's row: its own, else its family's; ok is false for a
// key the table does not name (a user's own key).
func Lookup(key string) (Key, bool) {
	if i, ok := exact[key]; ok {
		return Table[i], true
	}
	for _, i := range prefixes {
		if Table[i].Matches(key) {
			return Table[i], true
		}
	}
	return Key{}, false
}

// ToMembers says whether a template's key goes into its member copies: a
// key the table does not name does (it is the user's content).
func ToMembers(key string) bool {
	k, ok := Lookup(key)
	return !ok || k.ToMembers
}

// NewRevision says whether a change of a template's key is a change of
// content a Rollout takes in as a new revision: a key the table does not
// name is.
func NewRevision(key string) bool {
	k, ok := Lookup(key)
	return !ok || k.NewRevision
}

// DecidesHolds says whether a template's, a policy's or a Cluster's key
// holds a member's copy or delays its deletion: the keys pkg/hold's checks
// and the countdowns read, a change of which is taken before bulk work and
// which a deleted policy leaves on its bindings.
func DecidesHolds(key string) bool {
	k, ok := Lookup(key)
	return ok && k.On&(Template|Policy|Cluster) != 0 && (k.Effect == Holds || k.Effect == Delays)
}

var exact, prefixes = index()

func index() (map[string]int, []int) {
	exact := map[string]int{}
	var prefixes []int
	for i, k := range Table {
		if k.Prefix {
			prefixes = append(prefixes, i)
		} else {
			exact[k.Name] = i
		}
	}
	return exact, prefixes
}
