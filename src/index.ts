export { default } from "./app";
