/**
 * Collects items and hands them over together once per event-loop turn (setImmediate): everything produced in one
 * turn travels as one frame, so a stream pays one write, not one per item.
 */
export class TurnBatcher<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(private readonly flush: (items: T[]) => void) {}

  push(item: T): void {
    this.items.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const items = this.items;
      this.items = [];
      if (items.length > 0) this.flush(items);
    });
  }
}
