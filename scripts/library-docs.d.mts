export const LIBRARY_DOC: string;
export function libraryReference(): string;
export function updateLibraryDoc(current: string): string;
