/// Slots written by concurrent tasks, one slot each, and read after they are done.
///
/// `@unchecked Sendable`: each slot has one writer, and no slot is read until
/// `concurrentPerform` has returned.
package final class SlotArray<Element>: @unchecked Sendable {
  private let slots: UnsafeMutableBufferPointer<Element?>
  package init(count: Int) {
    slots = .allocate(capacity: count)
    slots.initialize(repeating: nil)
  }
  deinit {
    _ = slots.deinitialize()
    slots.deallocate()
  }
  package subscript(index: Int) -> Element? {
    get { slots[index] }
    set { slots[index] = newValue }
  }
}
