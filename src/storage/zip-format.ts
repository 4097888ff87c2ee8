/** The zip format's numbers (PKWARE's APPNOTE.TXT) that Steward's zip reader and writer share. */

/** Record signatures. */
export const LOCAL_HEADER = 0x04034b50;
export const DIRECTORY_ENTRY = 0x02014b50;
export const END_OF_DIRECTORY = 0x06054b50;

/** Compression methods. */
export const STORED = 0;
export const DEFLATED = 8;

/** General purpose flag bits: bit 0, the entry is encrypted; bit 3, its CRC-32 and sizes follow its data. */
export const ENCRYPTED = 0x0001;
export const DESCRIPTOR_FOLLOWS = 0x0008;

/** A data descriptor: its signature, then the CRC-32 and the two sizes (16 bytes without ZIP64). */
export const DATA_DESCRIPTOR = 0x08074b50;
export const DESCRIPTOR_BYTES = 16;
