import { workflowInfo } from '@temporalio/workflow';

/**
 * When the current workflow task started, for a send inside it (a card authorization, a payout) whose
 * bounds count from that start: a retry of a lost task starts only once the task timed out after it.
 *
 * Workflow time (`Date.now()`) is the task's start only until a local activity completes in it: sdk-core
 * then moves it on by the activity's runtime. So the time is read before each local activity is scheduled
 * (`clocked`): the first one a task schedules is scheduled before any it scheduled can complete. A task is
 * told by the history length its activations carry, which only a new task moves. One activity can outlive
 * its task (the worker heartbeats a task while a local activity runs long, and the activity completes in
 * the next): the next task then started after that activity was scheduled, so that time is taken (a start
 * earlier than the real one only tightens the bounds).
 *
 * The clock is the workflow's own state, kept on its global object: the workflow modules are shared by
 * every workflow of a worker (no module-level state, eslint.config.js), while the SDK gives each workflow
 * its own set of global properties, swapped in whenever it runs.
 */
interface Clock {
  current?: { historyLength: number; startedAt: number };
  /**
   * Local activities scheduled and not yet seen completed: the task each was scheduled in, and when. One
   * from an earlier task may already have completed in this one (its completion runs a few steps after the
   * time moved on), so each still here counts.
   */
  pending: Set<{ historyLength: number; scheduledAt: number }>;
  /** Per task, the earliest schedule time of a local activity from an earlier task that completed in it. */
  carried?: { historyLength: number; scheduledAt: number };
}

const CLOCK = Symbol.for('payments.taskClock');

function clock(): Clock {
  const global = globalThis as { [CLOCK]?: Clock };
  return (global[CLOCK] ??= { pending: new Set() });
}

export function taskStartedAt(): number {
  const { historyLength } = workflowInfo();
  const state = clock();
  if (state.current?.historyLength !== historyLength) {
    let startedAt = Date.now();
    const { carried } = state;
    if (carried?.historyLength === historyLength) startedAt = Math.min(startedAt, carried.scheduledAt);
    for (const activity of state.pending)
      if (activity.historyLength !== historyLength) startedAt = Math.min(startedAt, activity.scheduledAt);
    state.current = { historyLength, startedAt };
  }
  return state.current.startedAt;
}

/**
 * Schedules a local activity with the task's start read first, and notes one that outlived its task. The
 * activity's own promise is returned, so its caller resumes exactly as without this (no extra step that
 * could reorder the commands of a history recorded before).
 */
function scheduled<T>(schedule: () => Promise<T>): Promise<T> {
  taskStartedAt();
  const state = clock();
  const activity = { historyLength: workflowInfo().historyLength, scheduledAt: Date.now() };
  state.pending.add(activity);
  const completion = schedule();
  const completed = () => {
    state.pending.delete(activity);
    const now = workflowInfo().historyLength;
    const { carried } = state;
    if (
      now !== activity.historyLength &&
      !(carried?.historyLength === now && carried.scheduledAt <= activity.scheduledAt)
    )
      state.carried = { historyLength: now, scheduledAt: activity.scheduledAt };
  };
  // Registered before the caller's own continuation, so it runs first.
  completion.then(completed, completed);
  return completion;
}

type Callable = ((...args: unknown[]) => Promise<unknown>) & {
  executeWithOptions(options: unknown, args: unknown[]): Promise<unknown>;
};

/** Local activities whose every scheduling reads the task's start first (`taskStartedAt`). */
export function clocked<Activities extends object>(activities: Activities): Activities {
  return new Proxy(activities, {
    get(target, name, receiver) {
      const activity = Reflect.get(target, name, receiver) as Callable;
      if (typeof activity !== 'function') return activity;
      const call = (...args: unknown[]) => scheduled(() => activity(...args));
      call.executeWithOptions = (options: unknown, args: unknown[]) =>
        scheduled(() => activity.executeWithOptions(options, args));
      return call;
    },
  });
}
