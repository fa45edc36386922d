package protocol

import "github.com/mcpkit/mcpkit/jsonrpc"

// Method names.
const (
	MethodDiscover              = "server/discover"
	MethodToolsList             = "tools/list"
	MethodToolsCall             = "tools/call"
	MethodResourcesList         = "resources/list"
	MethodResourcesRead         = "resources/read"
	MethodResourceTemplatesList = "resources/templates/list"
	MethodPromptsList           = "prompts/list"
	MethodPromptsGet            = "prompts/get"
	MethodComplete              = "completion/complete"
	MethodSubscriptionsListen   = "subscriptions/listen"

	// Legacy-era methods.
	MethodInitialize              = "initialize"
	MethodPing                    = "ping"
	MethodLoggingSetLevel         = "logging/setLevel"
	MethodResourcesSubscribe      = "resources/subscribe"
	MethodResourcesUnsubscribe    = "resources/unsubscribe"
	MethodNotificationInitialized = "notifications/initialized"

	// Input requests (server to client, carried by MRTR).
	MethodElicit        = "elicitation/create"
	MethodCreateMessage = "sampling/createMessage"
	MethodListRoots     = "roots/list"

	// Notifications.
	NotificationCancelled                 = "notifications/cancelled"
	NotificationProgress                  = "notifications/progress"
	NotificationMessage                   = "notifications/message"
	NotificationResourceUpdated           = "notifications/resources/updated"
	NotificationResourceListChanged       = "notifications/resources/list_changed"
	NotificationToolListChanged           = "notifications/tools/list_changed"
	NotificationPromptListChanged         = "notifications/prompts/list_changed"
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
	NotificationRootsListChanged          = "notifications/roots/list_changed"
	// NotificationElicitationComplete is revision 2025-11-25's; 2026-07-28
	// removed it.
	NotificationElicitationComplete = "notifications/elicitation/complete"
)

// The methods of the Tasks extension (io.modelcontextprotocol/tasks) that
// name a task. Their Mcp-Name header mirrors params.taskId.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"
)

// NameParam reports which params member the Mcp-Name HTTP header mirrors for
// method: "name" for tools/call and prompts/get, "uri" for resources/read,
// "taskId" for the Tasks extension's tasks/get, tasks/update and
// tasks/cancel, and "" for methods without one.
func NameParam(method string) string {
	switch method {
	case MethodToolsCall, MethodPromptsGet:
		return "name"
	case MethodResourcesRead:
		return "uri"
	case MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		return "taskId"
	}
	return ""
}

func init() {
	// The names every message carries are read without allocating.
	jsonrpc.Intern(MethodDiscover, MethodToolsList, MethodToolsCall, MethodResourcesList, MethodResourcesRead,
		MethodResourceTemplatesList, MethodPromptsList, MethodPromptsGet, MethodComplete, MethodSubscriptionsListen,
		MethodInitialize, MethodPing, MethodLoggingSetLevel, MethodResourcesSubscribe, MethodResourcesUnsubscribe,
		MethodNotificationInitialized, MethodElicit, MethodCreateMessage, MethodListRoots,
		NotificationCancelled, NotificationProgress, NotificationMessage, NotificationResourceUpdated,
		NotificationResourceListChanged, NotificationToolListChanged, NotificationPromptListChanged,
		NotificationSubscriptionsAcknowledged, NotificationRootsListChanged)
	jsonrpc.Intern(ModernVersions...)
	jsonrpc.Intern(LegacyVersions...)
}
