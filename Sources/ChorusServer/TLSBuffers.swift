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
/// ciphertext going out, made when its handler is added and kept for the connection's life. Their
/// touched pages, and the pages they share with other blocks, stay resident; once connections
/// have come and gone, new buffers are cut from recycled memory that is resident throughout. As
/// nginx frees an idle keep-alive connection's TLS buffers, the server gives those pages back to
/// the kernel once a connection has been quiet for a while (`madvise(MADV_DONTNEED)`: the memory
/// stays allocated and reads as zeros; the next read or write takes fresh pages). An idle TLS
/// connection went from 23.5 to 13.8 KiB, and from 38 to 14 KiB on a warm heap (BENCHMARKS.md).
///
/// The buffers are known by their allocation. TLS channels allocate through `allocator`, which
/// notes each block of at least `threshold` bytes allocated while `noting(owner:)` runs on that
/// thread and follows the block through `realloc` and `free`. The server wraps in it the adding
/// of a connection's TLS handler, where swift-nio-ssl makes both buffers, and its writes to the
/// connection: when a reader lags, the outbound buffer is still queued in the socket channel as
/// the next record is written, and swift-nio-ssl writes into a new one. Blocks made at other
/// times (a large socket read) are not noted and stay as they are.
///
/// Between two events of a connection both buffers hold nothing live: the handler hands every
/// decrypted byte on (`channelReadComplete`) and every encrypted byte to the socket channel. The
/// socket channel may still hold some of them while the kernel's buffer is full; `release` is
/// only called when it holds none (`IRCServer.releaseIdleTLSBuffers`).
enum TLSBuffers {
    /// The allocator of TLS channels: the C library's, with large blocks noted.
    static let allocator = ByteBufferAllocator(
        allocate: { size in
            guard size >= TLSBuffers.threshold else { return malloc(size) }
            // On a page boundary, so that every page of the block can be given back; otherwise
            // its first and last pages, shared with other blocks, stay (8 KiB a connection).
            var block: UnsafeMutableRawPointer?
            guard posix_memalign(&block, TLSBuffers.pageSize, size) == 0, let block else { return nil }
            TLSBuffers.allocated(block)
            return block
        },
        reallocate: { old, oldSize, newSize in
            let block = realloc(old, newSize)
            if let old, let block, oldSize >= TLSBuffers.threshold || newSize >= TLSBuffers.threshold {
                TLSBuffers.moved(old, to: block, size: newSize)
            }
            return block
        },
        deallocate: { block in
            if TLSBuffers.usableSize(block) >= TLSBuffers.threshold { TLSBuffers.freed(block) }
            free(block)
        },
        copy: { destination, source, count in
            destination.copyMemory(from: source, byteCount: count)
        })

    /// swift-nio-ssl's smaller buffer is one TLS record (16 KiB); nothing smaller is worth a syscall.
    static let threshold = 16 * 1024
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// A block's size: only large ones cost a look in the notes when freed, and a noted block's
    /// pages are found from it rather than from a size kept in the notes. It may exceed what was
    /// asked for by a few bytes, which are the block's own.
    private static func usableSize(_ block: UnsafeMutableRawPointer) -> Int {
        #if canImport(Darwin)
        malloc_size(block)
        #else
        cMallocUsableSize(block)  // <malloc.h>, which the Glibc module leaves out
        #endif
    }

    /// The noted blocks' owners, by address: a free has only the address to go by. Nothing is
    /// kept per owner (a dictionary entry and an array each cost an idle connection ~90 bytes): a
    /// sweep releases all the owners it found idle in one pass over the blocks instead.
    private static let notes = Mutex<[UInt: Int]>([:])

    /// For whom this thread is inside `noting` (the owner plus one; none outside). Thread-specific
    /// rather than under the lock, as every write to a TLS connection passes here.
    private static let notingOwner: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key for TLSBuffers")
        return key
    }()

    /// Runs `body`, noting the large blocks it allocates on this thread as `owner`'s.
    static func noting<T>(owner: Int, _ body: () throws -> T) rethrows -> T {
        let key = notingOwner
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: owner &+ 1))
        defer { pthread_setspecific(key, outer) }
        return try body()
    }

    /// Gives back the whole pages inside the noted blocks of `owners`; returns how many bytes.
    /// Their contents must be dead (see the type's comment).
    @discardableResult
    static func release(owners: Set<Int>) -> Int {
        guard !owners.isEmpty else { return 0 }
        let page = pageSize
        return notes.withLock { notes in
            var released = 0
            for (address, owner) in notes where owners.contains(owner) {
                let start = (Int(address) + page - 1) / page * page
                let end = (Int(address) + usableSize(UnsafeMutableRawPointer(bitPattern: address)!)) / page * page
                guard end > start, madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, Int32(MADV_DONTNEED)) == 0
                else { continue }
                released += end - start
            }
            return released
        }
    }

    /// How many blocks are noted for `owner` (tests).
    static func blockCount(owner: Int) -> Int {
        notes.withLock { $0.values.count { $0 == owner } }
    }

    private static func allocated(_ block: UnsafeMutableRawPointer) {
        guard let tag = pthread_getspecific(notingOwner) else { return }
        let owner = Int(bitPattern: tag) &- 1
        notes.withLock { $0[UInt(bitPattern: block)] = owner }
    }

    private static func moved(_ old: UnsafeMutableRawPointer, to new: UnsafeMutableRawPointer, size: Int) {
        notes.withLock { notes in
            guard let owner = notes.removeValue(forKey: UInt(bitPattern: old)) else { return }
            // Shrunk below the threshold, a block's free would not look here: forget it now.
            if size >= TLSBuffers.threshold {
                notes[UInt(bitPattern: new)] = owner
            }
        }
    }

    private static func freed(_ block: UnsafeMutableRawPointer) {
        _ = notes.withLock { $0.removeValue(forKey: UInt(bitPattern: block)) }
    }
}

#if !canImport(Darwin)
@_silgen_name("malloc_usable_size")
private func cMallocUsableSize(_ block: UnsafeMutableRawPointer) -> Int
#endif
