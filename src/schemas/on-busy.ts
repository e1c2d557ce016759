/**
 * What a message sent to a session whose run is active does (decision 0032): refused with 409 `session_busy`
 * (`reject`), kept to become the session's next run (`queue`), joined to the active run before its next model
 * call (`steer`), or put in place of the active run, which is cancelled (`interrupt`). One list for the
 * config (an agent's `options.on_busy`), the wire and the engine.
 */
export const onBusyPolicies = ['reject', 'queue', 'steer', 'interrupt'] as const;
export type OnBusy = (typeof onBusyPolicies)[number];

/** The most messages a session may hold waiting (queued and steered together) that a config may allow. */
export const maxQueuedMessagesLimit = 100;
