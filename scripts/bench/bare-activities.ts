/** The bare workflow's activities: nothing to do, so what is left is Temporal's own cost of an activity. */
export async function first(): Promise<void> {}
export async function second(): Promise<void> {}
export async function third(): Promise<void> {}
