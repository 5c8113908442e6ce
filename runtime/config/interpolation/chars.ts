/** Character codes and lexer modes shared by the scanner and the parser. */
export const BS = 92; // \
export const DOLLAR = 36; // $
export const LBRACE = 123; // {
export const RBRACE = 125; // }
export const SQ = 39; // '
export const DQ = 34; // "
export const COLON_C = 58; // :
export const SPACE = 32;
export const TAB = 9;

export const M_INTER = 0;
export const M_VALUE = 1;
export const M_SQ = 2;
export const M_DQ = 3;
