/// Slots written by concurrent tasks, one slot each, and read after they are done.
///
/// `@unchecked Sendable`: each slot has one writer, and no slot is read until
/// `concurrentPerform` has returned.
final class SlotArray<Element>: @unchecked Sendable {
  private let slots: UnsafeMutableBufferPointer<Element?>
  init(count: Int) {
    slots = .allocate(capacity: count)
    slots.initialize(repeating: nil)
  }
  deinit {
    _ = slots.deinitialize()
    slots.deallocate()
  }
  subscript(index: Int) -> Element? {
    get { slots[index] }
    set { slots[index] = newValue }
  }
}
