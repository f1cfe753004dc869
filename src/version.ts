/** The package version. */
export const VERSION: string = "0.1.0";
