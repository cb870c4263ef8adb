/** Array-backed FIFO with O(1) amortised shift; the publishing queue is hot. */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }
  push(item: T): void {
    this.items.push(item);
  }
  peek(index = 0): T | undefined {
    return this.items[this.head + index];
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
