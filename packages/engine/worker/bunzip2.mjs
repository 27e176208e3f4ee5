/**
 * Decompresses a bzip2 stream on a worker thread, so that an ingest parses on one core while this one decodes.
 *
 * The block decoder is unbzip2-stream's (`lib/bzip2.js`, `lib/bit_iterator.js`), driven as its own stream driver
 * (`index.js`) drives it, but with its bytes written into a typed array rather than pushed one by one onto a plain
 * array that is then copied into a Buffer: that push and copy took more time than the decoding itself.
 *
 * Messages in: `{ chunk }` compressed bytes (sent when this thread asked with `{ more }`), `{ end }` no more
 * input, `{ taken }` a decoded piece was taken. Messages out: `{ more }`, `{ piece }` a block's decoded bytes
 * (their buffer transferred), `{ failed }` the decoder's reason, `{ done }`. At most `ahead` decoded pieces are
 * untaken at once, so memory stays bounded whichever side is slower.
 */
import { parentPort, workerData } from "node:worker_threads"
import bitIterator from "unbzip2-stream/lib/bit_iterator.js"
import bz2 from "unbzip2-stream/lib/bzip2.js"

const ahead = workerData.ahead
/** Compressed input is fed in pieces of this size, so that backpressure is looked at between blocks. */
const slice = 16_384

// The driver's state, as unbzip2-stream's index.js keeps it.
const queue = []
let hasBytes = 0
let blockSize = 0
let bitReader = null
let streamCRC = null
/** The block decoder's work space, kept from block to block (it writes every entry it later reads). */
let work = new Int32Array(0)
/** A block's decoded bytes. */
let out = new Uint8Array(0)
let length = 0
const sink = (byte) => {
  if (length === out.length) {
    const bigger = new Uint8Array(out.length * 2)
    bigger.set(out)
    out = bigger
  }
  out[length++] = byte
}

/** Decodes a stream header or one block; hands on the block's bytes. */
const decodeBlock = () => {
  if (!blockSize) {
    blockSize = bz2.header(bitReader)
    streamCRC = 0
    return
  }
  const bufsize = 100000 * blockSize
  if (work.length !== bufsize) work = new Int32Array(bufsize)
  out = new Uint8Array(bufsize)
  length = 0
  streamCRC = bz2.decompress(bitReader, sink, work, bufsize, streamCRC)
  // The end of one stream; another may follow.
  if (streamCRC === null) blockSize = 0
  else {
    untaken++
    parentPort.postMessage({ piece: out.subarray(0, length) }, [out.buffer])
  }
}

let failed = false
const fail = (e) => {
  failed = true
  parentPort.postMessage({ failed: e instanceof Error ? e.message : String(e) })
}

const write = (data) => {
  queue.push(data)
  hasBytes += data.length
  if (bitReader === null) bitReader = bitIterator(() => queue.shift())
  // A block is decoded once enough input for the longest block has come.
  while (!failed && hasBytes - bitReader.bytesRead + 1 >= (25000 + 100000 * blockSize || 4)) {
    try {
      decodeBlock()
    } catch (e) {
      fail(e)
    }
  }
}

const end = () => {
  while (!failed && bitReader !== null && hasBytes > bitReader.bytesRead) {
    try {
      decodeBlock()
    } catch (e) {
      fail(e)
    }
  }
  if (failed) return
  if (streamCRC !== null) fail(new Error("input stream ended prematurely"))
  else parentPort.postMessage({ done: true })
}

/** Compressed input received and not yet fed. */
const input = []
let offset = 0
let untaken = 0
let inputEnded = false
let asked = false
let finished = false

const run = () => {
  while (!finished && !failed && untaken < ahead) {
    if (input.length === 0) {
      if (inputEnded) {
        finished = true
        end()
      } else if (!asked) {
        asked = true
        parentPort.postMessage({ more: true })
      }
      return
    }
    // The next compressed chunk is asked for before this one is used up, so that decoding never waits for it.
    if (input.length === 1 && !inputEnded && !asked) {
      asked = true
      parentPort.postMessage({ more: true })
    }
    const chunk = input[0]
    const stop = Math.min(chunk.length, offset + slice)
    write(chunk.subarray(offset, stop))
    offset = stop
    if (offset === chunk.length) {
      input.shift()
      offset = 0
    }
  }
}

parentPort.on("message", (message) => {
  if (message.taken) untaken--
  else if (message.end) {
    asked = false
    inputEnded = true
  } else if (message.chunk) {
    asked = false
    input.push(message.chunk)
  }
  run()
})
run()
