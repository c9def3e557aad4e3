/**
 * The service's icon: a V on the link colour of its pages, as SVG (a few hundred bytes of text, sharp at any size).
 * Pages name it with `<link rel="icon">`; `/favicon.ico`, which a browser asks for on its own (a JSON document
 * opened in a tab, say), answers the same image.
 */
export const FAVICON = '/favicon.svg';
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="6" fill="#0645ad"/>' +
  '<path d="M8 9l8 15 8-15" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/>' +
  '</svg>';
