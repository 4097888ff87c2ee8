/** Which parts of a suite to run (`npm run bench -- <suite> --part <part>`): every part unless some are named. */
export type PartFilter = (part: string) => boolean;

export const EVERY_PART: PartFilter = () => true;
