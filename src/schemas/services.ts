// Services (docs/api.md, "Services and technicians"): the listed resource and
// the request fields that choose a visit's service and place.
import * as z from "zod/v4";
import { once } from "../lib/once";
import { optionalText } from "./common";

export const service = once(() =>
  z
    .object({
      id: z.string().meta({ example: "svc_01m81r170vt72z173z69cgy8ce" }),
      name: z.string().meta({ example: "Termite treatment" }),
      durationMinutes: z.number().int().meta({ description: "How long the visit takes", example: 180 }),
      bufferMinutes: z
        .number()
        .int()
        .meta({ description: "Travel or clean-up after it: the technician starts nothing else", example: 30 }),
      arrivalWindowMinutes: z
        .number()
        .int()
        .meta({ description: "The arrival window promised from the start (0: an exact time)", example: 120 }),
      skills: z.array(z.string()).meta({ description: "What a technician needs for it", example: ["termite-license"] }),
      keywords: z
        .array(z.string())
        .meta({ description: "What a caller may say for it (insectName)", example: ["termites", "white ants"] }),
      default: z.boolean().meta({ description: "The service of a request that names none" }),
      active: z.boolean(),
    })
    .meta({ id: "Service" }),
);

export type ServiceOut = z.output<ReturnType<typeof service>>;

export const serviceList = once(() => z.object({ services: z.array(service()) }).meta({ id: "ServiceList" }));

/** The members that choose a visit's service and place (availability and booking). */
export const visitFields = () => ({
  serviceId: optionalText(64).meta({
    description:
      "The service (GET /api/v1/services). Without it: the service whose keyword is insectName, else the default one",
    example: "svc_demo0000000000000000000003",
  }),
  postalCode: optionalText(12)
    .refine((v) => v === null || /^[A-Za-z0-9][A-Za-z0-9 -]*$/.test(v), {
      message: "must be a postal code: letters, digits, spaces and -",
      params: { code: "invalid_format" },
    })
    .meta({
      description: "Where the visit is: only technicians covering it are offered",
      example: "11201",
    }),
});
