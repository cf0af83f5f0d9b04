import type { WorkflowHandle } from '@temporalio/client';

/**
 * The local activities a workflow's history recorded, by name, in order: each is a marker whose details
 * name its activity type.
 */
export async function localActivitiesOf(handle: WorkflowHandle): Promise<string[]> {
  return ((await handle.fetchHistory()).events ?? []).flatMap((event) => {
    const payload = event.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
    if (!payload) return [];
    const marker = JSON.parse(Buffer.from(payload).toString()) as { activity_type?: string };
    return marker.activity_type ? [marker.activity_type] : [];
  });
}
