#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(CustomByteBufferAllocator) import NIOCore
import Synchronization

/// The memory of idle TLS connections.
///
/// swift-nio-ssl gives each connection a 32 KiB buffer for decrypted input and a 16 KiB one for
/// ciphertext going out, made when its handler is added and kept for the connection's life. As
/// nginx frees an idle keep-alive connection's TLS buffers, the server gives those pages back to
/// the kernel once a connection has been quiet for a while (`madvise(MADV_DONTNEED)`: the memory
/// stays allocated and reads as zeros; the next read or write takes fresh pages). An idle TLS
/// connection went from 23.5 to 13.8 KiB, and from 38 to 14 KiB on a warm heap (BENCHMARKS.md).
///
/// TLS channels allocate through `allocator`. Blocks of `threshold` bytes or more are cut, whole
/// pages each, from address space reserved for them apart from the C library's heap (`Region`):
/// every page of such a block can be given back, and the heap is left to the small objects,
/// without the holes that page-aligned blocks cut into it (~300 bytes per connection that no
/// later allocation filled). A freed block's pages go back at once and the block is reused.
/// Smaller blocks are the C library's. Should the region be missing or full, large blocks are
/// the C library's too, and stay resident.
///
/// Each large block is noted with its owner: the connection inside whose `noting(owner:)` it
/// was made on this thread. The server wraps in it the adding of a connection's TLS handler,
/// where swift-nio-ssl makes both buffers, and its writes to the connection: when a reader lags,
/// the outbound buffer is still queued in the socket channel as the next record is written, and
/// swift-nio-ssl writes into a new one. Blocks made at other times have no owner and are given
/// back only when freed.
///
/// Between two events of a connection both buffers hold nothing live: the handler hands every
/// decrypted byte on (`channelReadComplete`) and every encrypted byte to the socket channel. The
/// socket channel may still hold some of them while the kernel's buffer is full; `release` is
/// only called when it holds none (`IRCServer.releaseIdleTLSBuffers`).
enum TLSBuffers {
    /// The allocator of TLS channels.
    static let allocator = ByteBufferAllocator(
        allocate: { size in
            TLSBuffers.allocate(size, owner: TLSBuffers.currentOwner)
        },
        reallocate: { old, oldSize, newSize in
            guard let old else { return TLSBuffers.allocate(newSize, owner: TLSBuffers.currentOwner) }
            guard Region.contains(old) else {
                guard newSize >= TLSBuffers.threshold else { return realloc(old, newSize) }
                return TLSBuffers.move(old, oldSize, newSize, into: TLSBuffers.allocate(newSize, owner: TLSBuffers.currentOwner))
            }
            let note = TLSBuffers.pages.withLock { $0.notes[UInt(bitPattern: old)] }
            if let note, newSize <= note.pages * TLSBuffers.pageSize { return old }
            return TLSBuffers.move(old, oldSize, newSize, into: TLSBuffers.allocate(newSize, owner: note?.owner))
        },
        deallocate: { TLSBuffers.deallocate($0) },
        copy: { destination, source, count in
            destination.copyMemory(from: source, byteCount: count)
        })

    /// swift-nio-ssl's smaller buffer is one TLS record (16 KiB); nothing smaller is worth a syscall.
    static let threshold = 16 * 1024
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Address space for the large blocks, reserved once; pages are only used as they are touched.
    /// 16 GiB is some 340,000 connections' buffers.
    private enum Region {
        static let size = 16 << 30
        static let (start, end): (UInt, UInt) = {
            guard let base = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
                  base != UnsafeMutableRawPointer(bitPattern: -1) else { return (0, 0) }
            return (UInt(bitPattern: base), UInt(bitPattern: base) + UInt(size))
        }()

        static func contains(_ block: UnsafeMutableRawPointer) -> Bool {
            let address = UInt(bitPattern: block)
            return address >= start && address < end
        }
    }

    /// A large block's owner and length in pages, in one word: there is a note per block.
    private struct Note {
        private let bits: UInt

        init(owner: Int?, pages: Int) {
            bits = UInt(owner.map { $0 + 1 } ?? 0) << 16 | UInt(pages)
        }

        var owner: Int? { bits >> 16 == 0 ? nil : Int(bits >> 16) - 1 }
        var pages: Int { Int(bits & 0xFFFF) }
    }

    /// What the region holds: the blocks in use, by address (a free has only the address to go
    /// by), and freed blocks by length, to be used again.
    private struct Pages {
        /// Where the part of the region never used yet starts.
        var unused: UInt = 0
        var notes: [UInt: Note] = [:]
        var freed: [Int: [UInt]] = [:]

        mutating func take(_ count: Int, owner: Int?) -> UnsafeMutableRawPointer? {
            let address: UInt
            if let reused = freed[count]?.popLast() {
                address = reused
            } else {
                if unused == 0 { unused = Region.start }
                let length = UInt(count * TLSBuffers.pageSize)
                guard Region.end - unused >= length else { return nil }
                address = unused
                unused += length
            }
            notes[address] = Note(owner: owner, pages: count)
            return UnsafeMutableRawPointer(bitPattern: address)
        }
    }

    private static let pages = Mutex(Pages())

    private static func allocate(_ size: Int, owner: Int?) -> UnsafeMutableRawPointer? {
        let count = (size + pageSize - 1) / pageSize
        guard size >= threshold, count <= 0xFFFF,
              let block = pages.withLock({ $0.take(count, owner: owner) }) else { return malloc(size) }
        return block
    }

    /// `realloc` between the region and the heap: what fits is copied, and the old block freed.
    private static func move(_ old: UnsafeMutableRawPointer, _ oldSize: Int, _ newSize: Int,
                             into new: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
        guard let new else { return nil }
        new.copyMemory(from: old, byteCount: min(oldSize, newSize))
        deallocate(old)
        return new
    }

    /// Frees a block: one of the region's pages go back to the kernel before it can be used again.
    private static func deallocate(_ block: UnsafeMutableRawPointer) {
        guard Region.contains(block) else { return free(block) }
        let address = UInt(bitPattern: block)
        guard let note = pages.withLock({ $0.notes.removeValue(forKey: address) }) else { return }
        madvise(block, note.pages * pageSize, Int32(MADV_DONTNEED))
        pages.withLock { $0.freed[note.pages, default: []].append(address) }
    }

    /// For whom this thread is inside `noting` (the owner plus one; none outside). Thread-specific
    /// rather than under the lock, as every write to a TLS connection passes here.
    private static let notingOwner: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key for TLSBuffers")
        return key
    }()

    private static var currentOwner: Int? {
        pthread_getspecific(notingOwner).map { Int(bitPattern: $0) &- 1 }
    }

    /// Runs `body`, noting the large blocks it allocates on this thread as `owner`'s.
    static func noting<T>(owner: Int, _ body: () throws -> T) rethrows -> T {
        let key = notingOwner
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: owner &+ 1))
        defer { pthread_setspecific(key, outer) }
        return try body()
    }

    /// Gives back the pages of the blocks of `owners`; returns how many bytes. Their contents must
    /// be dead (see the type's comment).
    @discardableResult
    static func release(owners: Set<Int>) -> Int {
        guard !owners.isEmpty else { return 0 }
        return pages.withLock { pages in
            var released = 0
            for (address, note) in pages.notes {
                guard let owner = note.owner, owners.contains(owner) else { continue }
                let length = note.pages * pageSize
                guard madvise(UnsafeMutableRawPointer(bitPattern: address), length, Int32(MADV_DONTNEED)) == 0 else { continue }
                released += length
            }
            return released
        }
    }

    /// How many blocks `owner` has (tests).
    static func blockCount(owner: Int) -> Int {
        pages.withLock { $0.notes.values.count { $0.owner == owner } }
    }

    /// Bytes of `owner`'s blocks in memory now (tests).
    static func residentBytes(owner: Int) -> Int {
        pages.withLock { pages in
            pages.notes.filter { $0.value.owner == owner }.reduce(0) { $0 + residentBytes(at: $1.key, pages: $1.value.pages) }
        }
    }

    /// The region's blocks in use and freed, the bytes of the freed ones still in memory, and how
    /// much of the region was ever used (tests).
    static func usage() -> (inUse: Int, freed: Int, freedResident: Int, used: Int) {
        pages.withLock { pages in
            let freed = pages.freed.flatMap { count, addresses in addresses.map { ($0, count) } }
            return (pages.notes.count, freed.count, freed.reduce(0) { $0 + residentBytes(at: $1.0, pages: $1.1) },
                    pages.unused == 0 ? 0 : Int(pages.unused - Region.start))
        }
    }

    private static func residentBytes(at address: UInt, pages count: Int) -> Int {
        var vector = [UInt8](repeating: 0, count: count)
        let length = count * pageSize
        guard vector.withUnsafeMutableBufferPointer({ vector in
            return mincore(UnsafeMutableRawPointer(bitPattern: address), length, vector.baseAddress) == 0
        }) else { return 0 }
        return vector.count { $0 & 1 == 1 } * pageSize
    }
}
