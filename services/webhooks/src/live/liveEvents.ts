import {
  ALL_HISTORIES_PATTERN,
  instanceHistoryPattern,
  instanceIdOf,
  instanceStateCatchingUp,
  invalidArgument,
  parseWebhookEventTypes,
  type EventStore,
} from '@wagw/lib';
import type { EndpointDirectory } from '../endpoints/endpointDirectory';
import { parseWebhookEventId, webhookEventsOf, type WebhookEvent } from '../routing/webhookEvent';

export interface LiveQuery {
  account: string;
  /** One instance; empty = every instance of the account. */
  instanceId: string;
  /** Webhook event types; empty = all. */
  types: string[];
  /** Resume after this webhook id; empty = from now on. */
  lastEventId: string;
}

/** A reader's live events, in the order of the event log, until it is closed. */
export interface LiveFeed extends AsyncIterable<WebhookEvent> {
  close(): Promise<void>;
}

/** Commits a feed asks the store for at a time: a reader that stops reading holds at most this many. */
const FEED_BATCH = 64;
/** How long a feed waits for the endpoint directory to learn a new instance's account (read-your-writes). */
const OWNER_WAIT_MS = 2_000;

/**
 * The live side of webhooks: the same payloads and ids as the webhook deliveries, read straight from the event log
 * (an ordered consumer per reader, no state kept), so any replica serves any reader and a webhook id is a position to
 * resume after: `evt_<sequence>_<index>` resumes at that commit, after that event.
 */
export class LiveEvents {
  private readonly open_ = new Set<LiveFeed>();

  constructor(
    private readonly events: EventStore,
    private readonly endpoints: EndpointDirectory,
  ) {}

  /** Checks the query (4xx errors before anything streams) and opens the feed. */
  async open(query: LiveQuery): Promise<LiveFeed> {
    const listed = parseWebhookEventTypes(query.types, 'types');
    const types = listed.length > 0 ? new Set<string>(listed) : null;
    const resume = query.lastEventId ? parseWebhookEventId(query.lastEventId) : null;
    if (query.lastEventId && !resume) throw invalidArgument('invalid_last_event_id', 'Last-Event-ID must be an event id (evt_<sequence>_<index>)');
    if (query.instanceId) await this.endpoints.assertOwner(query.account, query.instanceId);
    const pattern = query.instanceId ? instanceHistoryPattern(query.instanceId) : ALL_HISTORIES_PATTERN;
    const end = await this.events.version(ALL_HISTORIES_PATTERN);
    if (resume && resume.sequence > end) throw invalidArgument('invalid_last_event_id', 'Last-Event-ID is past the end of the event log');
    const subscription = await this.events.subscribe(pattern, { fromSequence: resume ? resume.sequence : end + 1, batch: FEED_BATCH });
    const owned = (stream: string, sequence: number): Promise<boolean> => this.ownedBy(query.account, instanceIdOf(stream), sequence);
    const feeds = this.open_;
    const feed: LiveFeed = {
      async *[Symbol.asyncIterator]() {
        for await (const { commit } of subscription) {
          if (!query.instanceId && !(await owned(commit.stream, commit.sequence))) continue;
          const fromIndex = resume && commit.sequence === resume.sequence ? resume.index + 1 : 0;
          for (const event of webhookEventsOf(commit, fromIndex)) if (!types || types.has(event.type)) yield event;
        }
      },
      close: async () => {
        feeds.delete(feed);
        await subscription.close();
      },
    };
    feeds.add(feed);
    return feed;
  }

  /** Ends every open feed (shutdown): their readers reconnect to another replica with their last event id. */
  async closeAll(): Promise<void> {
    await Promise.all([...this.open_].map((feed) => feed.close()));
  }

  /**
   * Whether the commit's instance is the account's. One the directory could not learn in time ends the feed (503): taken
   * for another account's, its events would be skipped for good, while the reader resumes from its last event id.
   */
  private async ownedBy(account: string, instanceId: string, sequence: number): Promise<boolean> {
    if (!this.endpoints.get(instanceId) && !(await this.endpoints.reach(instanceId, OWNER_WAIT_MS, sequence))) throw instanceStateCatchingUp();
    return this.endpoints.get(instanceId)?.account === account;
  }
}
