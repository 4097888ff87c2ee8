/** The zip format's numbers (PKWARE's APPNOTE.TXT) that Steward's zip reader and writer share. */

/** Record signatures. */
export const LOCAL_HEADER = 0x04034b50;
export const DIRECTORY_ENTRY = 0x02014b50;
export const END_OF_DIRECTORY = 0x06054b50;

/** Compression methods. */
export const STORED = 0;
export const DEFLATED = 8;
