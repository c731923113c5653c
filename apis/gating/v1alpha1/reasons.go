package v1alpha1

// Condition types, reasons and event reasons on Gates.
const (
	// ConditionOpened is True while the gate is open; its message says why
	// and until when ("Gate closed by default", "Gate scheduled for closing
	// at ...", "Closed by schedule 'no-deploy-friday' until ...").
	ConditionOpened = "Opened"
	// ConditionRequestValid is False while an open or close request
	// annotation cannot be read; the message names the annotation and value.
	ConditionRequestValid = "RequestValid"

	// ReasonDefault: no request and no schedule applies; the gate is in its
	// spec.default state.
	ReasonDefault = "Default"
	// ReasonOpenRequested: an open request is in force.
	ReasonOpenRequested = "OpenRequested"
	// ReasonCloseRequested: a close request is in force.
	ReasonCloseRequested = "CloseRequested"
	// ReasonScheduled: a schedule's window is running.
	ReasonScheduled = "Scheduled"
	// ReasonInvalidSchedule: a schedule cannot be read; the gate is closed
	// until it is fixed.
	ReasonInvalidSchedule = "InvalidSchedule"
	// ReasonRequestsValid: every request annotation can be read.
	ReasonRequestsValid = "RequestsValid"
	// ReasonInvalidRequest: a request annotation cannot be read.
	ReasonInvalidRequest = "InvalidRequest"

	// EventReasonGateOpened is sent when a gate opens, with why.
	EventReasonGateOpened = "GateOpened"
	// EventReasonGateClosed is sent when a gate closes, with why.
	EventReasonGateClosed = "GateClosed"
	// EventReasonInvalidRequest is sent when a request annotation becomes
	// unreadable.
	EventReasonInvalidRequest = "InvalidRequest"
	// EventReasonWebhookRequest is sent for each call of the webhook
	// receiver that opened or closed the gate.
	EventReasonWebhookRequest = "WebhookRequest"
)
